//! Every visible string in English and German: one table, one enum key per
//! string, `{}` placeholders filled in order by [`tf`]. The table is one
//! macro call, so a key without both texts does not compile; the tests
//! check that both languages use the same placeholders.

use std::cell::Cell;

/// The page's languages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Lang {
    #[default]
    En,
    De,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::De];

    /// The code stored in localStorage and put on `<html lang>`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
        }
    }

    /// The language's own name, for the switcher.
    pub fn name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::De => "Deutsch",
        }
    }

    /// A stored code or a browser language tag (`de-AT`, `en_US`), if it is
    /// one of ours.
    pub fn parse(tag: &str) -> Option<Lang> {
        let primary = tag
            .split(['-', '_'])
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match primary.as_str() {
            "en" => Some(Lang::En),
            "de" => Some(Lang::De),
            _ => None,
        }
    }

    /// The first of the browser's preferred languages we have; English
    /// otherwise.
    pub fn pick<'a>(preferred: impl IntoIterator<Item = &'a str>) -> Lang {
        preferred
            .into_iter()
            .find_map(Lang::parse)
            .unwrap_or_default()
    }
}

thread_local! {
    static CURRENT: Cell<Lang> = const { Cell::new(Lang::En) };
}

/// The language strings are rendered in now.
pub fn lang() -> Lang {
    CURRENT.with(Cell::get)
}

/// Sets the language for the next render (the app re-mounts its pages
/// when it changes, so every component picks it up).
pub fn set_lang(l: Lang) {
    CURRENT.with(|c| c.set(l));
}

macro_rules! table {
    ($($key:ident => $en:literal, $de:literal;)*) => {
        /// A visible string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum K { $($key,)* }

        impl K {
            /// Every key, for the completeness test.
            pub const ALL: &'static [K] = &[$(K::$key,)*];
        }

        /// The text of `k` in `l`.
        pub fn text(l: Lang, k: K) -> &'static str {
            match l {
                Lang::En => match k { $(K::$key => $en,)* },
                Lang::De => match k { $(K::$key => $de,)* },
            }
        }
    };
}

table! {
    // Summary line and its actions.
    ServerOne => "{} server", "{} Server";
    ServerMany => "{} servers", "{} Server";
    PlayerOne => "{} player", "{} Spieler";
    PlayerMany => "{} players", "{} Spieler";
    OpenCount => "{} open", "{} offen";
    OnlineCount => "{} online", "{} online";
    FiltersHide => "filters hide {}", "Filter blenden {} aus";
    ClearFilters => "clear", "zurücksetzen";
    HiddenCount => "{} hidden", "{} ausgeblendet";
    ShowHidden => "show", "anzeigen";
    HideHidden => "hide again", "wieder ausblenden";
    // Favourites and hidden rows.
    StarAdd => "Add {} to favourites", "{} zu den Favoriten";
    StarRemove => "Remove {} from favourites", "{} aus den Favoriten entfernen";
    HideRow => "Hide {}", "{} ausblenden";
    UnhideRow => "Show {} again", "{} wieder anzeigen";
    Unhide => "unhide", "einblenden";
    NotMatching => "not matching the filters", "passt nicht zu den Filtern";
    OfflineSeen => "offline — last seen {}", "offline — zuletzt gesehen {}";
    FavouritesOnly => "Favourites only", "Nur Favoriten";
    New => "new", "neu";
    // Table.
    TableCaption => "Game servers. Click a column heading to sort.", "Spielserver. Zum Sortieren auf eine Spaltenüberschrift klicken.";
    Address => "Address", "Adresse";
    Players => "Players", "Spieler";
    Free => "Free", "Frei";
    Lobby => "Lobby", "Lobby";
    Mode => "Mode", "Modus";
    // Ages.
    JustNow => "just now", "gerade eben";
    SecondsAgo => "{} s ago", "vor {} s";
    MinutesAgo => "{} min ago", "vor {} min";
    HoursAgo => "{} h ago", "vor {} h";
    DaysAgo => "{} d ago", "vor {} Tagen";
    Updated => "updated {}", "aktualisiert {}";
    // Everything else, by where it shows.
    AddTestServer => "Add a test server", "Testserver hinzufügen";
    Name => "Name", "Name";
    Port => "Port", "Port";
    AddressPlaceholder => "192.168.0.10 or host.example.org", "192.168.0.10 oder host.example.org";
    AddTestServerButton => "Add test server", "Testserver hinzufügen";
    SignInFirst => "Sign in with the admin token first.", "Zuerst mit dem Admin-Token anmelden.";
    NotSignedIn => "Not signed in", "Nicht angemeldet";
    CheckingToken => "Checking the token…", "Token wird geprüft…";
    SignedInCanAdd => "Signed in: you can add test servers", "Angemeldet: du kannst Testserver hinzufügen";
    TokenRejected => "Token rejected by the bridge", "Token von der Bridge abgelehnt";
    AdminToken => "Admin token", "Admin-Token";
    SignIn => "Sign in", "Anmelden";
    SignInOnOwnBridge => "This link shows another bridge's list: sign in on the page without ?bridge=.", "Dieser Link zeigt die Liste einer anderen Bridge: melde dich auf der Seite ohne ?bridge= an.";
    StaleLobby => "The connection to the lobby was lost; this is the last list received. Reconnecting by itself.", "Die Verbindung zur Lobby ist unterbrochen; das ist die zuletzt empfangene Liste. Die Seite verbindet sich von selbst neu.";
    StaleMaster => "The master server is unreachable; this is the last list it sent.", "Der Master-Server ist nicht erreichbar; das ist die letzte Liste, die er gesendet hat.";
    CantReach => "Can't reach the lobby right now", "Die Lobby ist gerade nicht erreichbar";
    CantReachDetail => "The page keeps trying by itself; the list appears as soon as the connection is back.", "Die Seite versucht es weiter; die Liste erscheint, sobald die Verbindung wieder steht.";
    LoadingServers => "Loading servers…", "Server werden geladen…";
    ConnectingLobby => "Connecting to the lobby.", "Verbindung zur Lobby wird aufgebaut.";
    NoMatch => "No servers match", "Kein Server passt";
    NoMatchDetail => "Every server is hidden by the search or the filters.", "Die Suche oder die Filter blenden alle Server aus.";
    ClearSearchFilters => "Clear search and filters", "Suche und Filter zurücksetzen";
    BridgeSays => "The bridge says: {}", "Die Bridge meldet: {}";
    AddrHidden => "hidden", "verborgen";
    Copied => "Copied", "Kopiert";
    Copy => "Copy", "Kopieren";
    CopyAddressOf => "Copy the address of {}", "Adresse von {} kopieren";
    Join => "Join", "Beitreten";
    JoinServer => "Join {} in the game", "{} im Spiel beitreten";
    SearchServers => "Search servers", "Server suchen";
    SearchLobby => "Search by name or address", "Nach Name oder Adresse suchen";
    SearchGames => "Search by name, map, game or address", "Nach Name, Karte, Spiel oder Adresse suchen";
    OpenOnly => "Open lobbies only", "Nur offene Lobbys";
    HideFull => "Hide full", "Volle ausblenden";
    HideEmpty => "Hide empty", "Leere ausblenden";
    Any => "Any", "Alle";
    AllServers => "← All servers", "← Alle Server";
    NotAnswering => "Not answering: {}", "Antwortet nicht: {}";
    NoReply => "no reply", "keine Antwort";
    Game => "Game", "Spiel";
    Map => "Map", "Karte";
    Version => "Version", "Version";
    Yes => "Yes", "Ja";
    No => "No", "Nein";
    Password => "Password", "Passwort";
    Secured => "Secured", "Gesichert";
    Off => "Off", "Aus";
    Ping => "Ping", "Ping";
    PlayersCount => "Players ({})", "Spieler ({})";
    NoPlayers => "The server lists no players.", "Der Server meldet keine Spieler.";
    UnknownOffline => "Unknown while the server does not answer.", "Unbekannt, solange der Server nicht antwortet.";
    Score => "Score", "Punkte";
    Frags => "Frags", "Frags";
    Deaths => "Deaths", "Tode";
    Money => "Money", "Geld";
    Time => "Time", "Zeit";
    NoName => "(no name)", "(ohne Namen)";
    RulesCount => "Rules ({})", "Regeln ({})";
    StatusCount => "Status ({})", "Status ({})";
    FilterRules => "Filter the rules", "Regeln filtern";
    FilterStatus => "Filter the status keys", "Statusschlüssel filtern";
    FilterPlaceholder => "Filter by name or value", "Nach Name oder Wert filtern";
    NoRules => "The server sent no rules.", "Der Server hat keine Regeln gesendet.";
    NoStatusKeys => "The server sent no status keys.", "Der Server hat keine Statusschlüssel gesendet.";
    NothingMatches => "Nothing matches “{}”.", "Nichts passt zu „{}“.";
    Value => "Value", "Wert";
    NotOnBridge => "This source is not on this bridge", "Diese Quelle gibt es auf dieser Bridge nicht";
    NotOnBridgeDetail => "The link names a game server source this lobby does not query (any more).", "Der Link nennt eine Quelle, die diese Lobby (nicht mehr) abfragt.";
    ShowLobby => "Show the lobby's servers", "Server der Lobby zeigen";
    StaleGames => "The connection to the lobby was lost; these are the last results received. Reconnecting by itself.", "Die Verbindung zur Lobby ist unterbrochen; das sind die zuletzt empfangenen Ergebnisse. Die Seite verbindet sich von selbst neu.";
    SourceError => "This source could not be read: {}", "Diese Quelle konnte nicht gelesen werden: {}";
    NoLongerListed => "This server is no longer listed", "Dieser Server ist nicht mehr gelistet";
    NoLongerListedDetail => "It stopped answering or its source dropped it. The list shows every server the source lists now.", "Er antwortet nicht mehr oder seine Quelle führt ihn nicht mehr. Die Liste zeigt alle Server, die die Quelle jetzt nennt.";
    ShowAllServers => "Show all servers", "Alle Server zeigen";
    NoServersListed => "No servers listed", "Keine Server gelistet";
    NoServersListedDetail => "The source lists no servers right now. This list updates by itself.", "Die Quelle nennt gerade keine Server. Die Liste aktualisiert sich von selbst.";
    TableCaptionGames => "Game servers. Click a column heading to sort, a name for details.", "Spielserver. Zum Sortieren auf eine Spaltenüberschrift klicken, für Details auf einen Namen.";
    DetailsOf => "Details of {}", "Details zu {}";
    Offline => "Offline", "Offline";
    NeedsPassword => "Needs a password", "Braucht ein Passwort";
    MainNav => "Main", "Hauptmenü";
    ServersNav => "Servers", "Server";
    Admin => "Admin", "Admin";
    NoServersOnline => "No servers online", "Keine Server online";
    NoServersOnlineDetail => "Nobody is hosting a game right now. This list updates by itself when a server starts.", "Gerade hostet niemand ein Spiel. Die Liste aktualisiert sich von selbst, sobald ein Server startet.";
    Unreachable => "unreachable", "nicht erreichbar";
    Games => "Games", "Spiele";
    Pages => "Pages", "Seiten";
    Previous => "‹ Previous", "‹ Zurück";
    PageOf => "Page {} of {}", "Seite {} von {}";
    Next => "Next ›", "Weiter ›";
    PlayerFewer => "One player fewer", "Ein Spieler weniger";
    PlayerMore => "One player more", "Ein Spieler mehr";
    Max => "Max", "Max";
    LobbyOpen => "Lobby open", "Lobby offen";
    RemoveNamed => "Remove {}", "{} entfernen";
    Remove => "Remove", "Entfernen";
    BridgeError => "Bridge: {}", "Bridge: {}";
    TestServers => "Test servers", "Testserver";
    TestServersHelp => "Each test server is registered over its own connection from this tab: it stays listed while this tab is open (on any page), and is registered again after a reload.", "Jeder Testserver wird über eine eigene Verbindung aus diesem Tab registriert: Er bleibt gelistet, solange der Tab offen ist (auf jeder Seite), und wird nach einem Neuladen wieder registriert.";
    AddSamples => "Add 10 sample servers", "10 Beispielserver hinzufügen";
    RemoveAll => "Remove all", "Alle entfernen";
    NoTestServers => "No test servers yet.", "Noch keine Testserver.";
    GameServers => "Game servers", "Spielserver";
    PageNotFound => "Page not found", "Seite nicht gefunden";
    BackToList => "Back to the server list", "Zurück zur Serverliste";
    UnnamedServer => "Unnamed server", "Unbenannter Server";
    ValveServer => "Valve server", "Valve-Server";
    SeriousSamServers => "Serious Sam servers", "Serious-Sam-Server";
    BotOne => "{} bot", "{} Bot";
    BotMany => "{} bots", "{} Bots";
    PlayersFull => "{}/{} full", "{}/{} voll";
    PlayersQueued => "{}/{} +{} queued", "{}/{} +{} wartend";
    Open => "Open", "Offen";
    InGame => "In game", "Im Spiel";
    FreeSlots => "Free slots", "Freie Plätze";
    Reconnecting => "Reconnecting…", "Verbinde neu…";
    ReconnectingIn => "Reconnecting in {} s", "Neuer Versuch in {} s";
    MasterUnreachable => "Master unreachable", "Master nicht erreichbar";
    LivePolling => "Live (polling)", "Live (Abfrage)";
    Live => "Live", "Live";
    Connecting => "Connecting…", "Verbinde…";
    TsConnecting => "connecting", "verbindet";
    TsSigningIn => "signing in", "meldet an";
    TsRegistered => "registered", "registriert";
    TsRegistering => "registering", "wird registriert";
    TsMasterDown => "waiting for the master", "wartet auf den Master";
    TsReconnecting => "reconnecting", "verbindet neu";
    TsNoToken => "sign in first", "zuerst anmelden";
    TsRejected => "token rejected", "Token abgelehnt";
    TsInvalid => "invalid: {}", "ungültig: {}";
    JoinSteam => "Join with Steam", "Mit Steam beitreten";
    // The server page (`/server/{key}`) and its history graphs.
    ServerStatus => "Status", "Status";
    Online => "Online", "Online";
    FirstSeen => "First seen", "Zuerst gesehen";
    LastSeen => "Last seen", "Zuletzt gesehen";
    SeenNow => "now (listed)", "jetzt (gelistet)";
    History => "History", "Verlauf";
    HistoryRange => "Range of the history", "Zeitraum des Verlaufs";
    Span1h => "1 h", "1 Std.";
    Span24h => "24 h", "24 Std.";
    Span7d => "7 days", "7 Tage";
    Span30d => "30 days", "30 Tage";
    Span90d => "90 days", "90 Tage";
    Span1y => "1 year", "1 Jahr";
    LastHour => "the last hour", "der letzten Stunde";
    Last24Hours => "the last 24 hours", "den letzten 24 Stunden";
    Last7Days => "the last 7 days", "den letzten 7 Tagen";
    Last30Days => "the last 30 days", "den letzten 30 Tagen";
    Last90Days => "the last 90 days", "den letzten 90 Tagen";
    LastYear => "the last year", "dem letzten Jahr";
    PeakPlayers => "Peak players", "Höchstzahl Spieler";
    AveragePlayers => "Players (average)", "Spieler (Durchschnitt)";
    DownloadCsv => "Download this history as CSV", "Diesen Verlauf als CSV herunterladen";
    DownloadWeekCsv => "Download the week as CSV", "Die Woche als CSV herunterladen";
    Week => "When to play", "Wann spielen";
    WeekHelp => "The last four weeks folded into one, in your local time: the darker an hour, the more players on average.", "Die letzten vier Wochen in eine gefaltet, in deiner Ortszeit: Je dunkler eine Stunde, desto mehr Spieler im Schnitt.";
    WeekBusiest => "Usually busiest on {}, {}–{}.", "Meist am vollsten {}, {}–{} Uhr.";
    WeekQuiet => "Nobody played in the last four weeks.", "In den letzten vier Wochen hat niemand gespielt.";
    WeekTable => "Average players per hour of the week, in your local time", "Durchschnittliche Spieler je Stunde der Woche, in deiner Ortszeit";
    WeekDay => "Day", "Tag";
    WeekCell => "{} players, peak {}", "{} Spieler, höchstens {}";
    WeekNoSamples => "no samples", "keine Messungen";
    Monday => "Monday", "Montag";
    Tuesday => "Tuesday", "Dienstag";
    Wednesday => "Wednesday", "Mittwoch";
    Thursday => "Thursday", "Donnerstag";
    Friday => "Friday", "Freitag";
    Saturday => "Saturday", "Samstag";
    Sunday => "Sunday", "Sonntag";
    Mondays => "Mondays", "montags";
    Tuesdays => "Tuesdays", "dienstags";
    Wednesdays => "Wednesdays", "mittwochs";
    Thursdays => "Thursdays", "donnerstags";
    Fridays => "Fridays", "freitags";
    Saturdays => "Saturdays", "samstags";
    Sundays => "Sundays", "sonntags";
    GraphSummary => "{} over {}: peak {} at {}, average {}.", "{} in {}: Höchstwert {} ({}), Durchschnitt {}.";
    GraphEmpty => "{} over {}: nothing recorded yet.", "{} in {}: noch nichts aufgezeichnet.";
    NoHistoryYet => "Nothing recorded in this range yet. The graph fills in as the lobby takes its samples.", "In diesem Zeitraum ist noch nichts aufgezeichnet. Der Graph füllt sich, sobald die Lobby Messungen nimmt.";
    UptimeShare => "Online", "Online";
    OpenShare => "Lobby open", "Lobby offen";
    SharesOver => "Share of the time recorded in {}", "Anteil der aufgezeichneten Zeit in {}";
    LoadingServer => "Loading the server…", "Server wird geladen…";
    LoadingHistory => "Loading the history…", "Verlauf wird geladen…";
    ServerLoadFailed => "The server's details could not be loaded. The page tries again by itself.", "Die Angaben zum Server konnten nicht geladen werden. Die Seite versucht es selbst erneut.";
    NoSuchServer => "No such server", "Diesen Server gibt es nicht";
    NoSuchServerDetail => "This lobby has never listed a server with this key: the link may be mistyped or from another lobby.", "Diese Lobby hat nie einen Server mit diesem Schlüssel gelistet: Der Link ist vielleicht falsch oder stammt von einer anderen Lobby.";
    OfflineDetail => "Not listed right now; these are the values it last reported.", "Gerade nicht gelistet; das sind die Werte, die er zuletzt gemeldet hat.";
    Embed => "Embed", "Einbinden";
    EmbedHelp => "Show this server's live state on your own site: copy one of these snippets. The badge is an image the lobby redraws as the server changes (at most a minute behind); the iframe shows a small live card.", "Zeige den Live-Zustand dieses Servers auf deiner eigenen Seite: Kopiere eines dieser Schnipsel. Das Abzeichen ist ein Bild, das die Lobby bei jeder Änderung neu zeichnet (höchstens eine Minute verzögert); der iframe zeigt eine kleine Live-Karte.";
    BadgeOf => "Badge of {}", "Abzeichen von {}";
    CopySnippet => "Copy the {} snippet", "{}-Schnipsel kopieren";
    IframeCard => "iframe (live card)", "iframe (Live-Karte)";
    OpenInLobby => "Open in the lobby", "In der Lobby öffnen";
    LobbyTotals => "The lobby over the last 24 hours", "Die Lobby in den letzten 24 Stunden";
    ServersOnline => "Servers online", "Server online";
    PlayersOnline => "Players online", "Spieler online";
    PlayersOf => "Players of {}", "Spieler von {}";
    // The admin's webhooks (`/admin`).
    Webhooks => "Webhooks", "Webhooks";
    WebhooksHelp => "Tell a site or a Discord channel when a server comes online, goes offline, opens its lobby or reaches a number of players. A webhook hears of each server and event at most once per cooldown, so a flapping server makes one message.", "Sag einer Website oder einem Discord-Kanal Bescheid, wenn ein Server online kommt, offline geht, seine Lobby öffnet oder eine Spielerzahl erreicht. Ein Webhook erfährt von jedem Server und Ereignis höchstens einmal pro Pause, sodass ein flackernder Server eine Nachricht macht.";
    NewWebhook => "New webhook", "Neuer Webhook";
    WebhookUrl => "URL", "URL";
    WebhookFormat => "Format", "Format";
    FormatStandard => "Standard Webhooks (signed JSON)", "Standard Webhooks (signiertes JSON)";
    FormatDiscord => "Discord message", "Discord-Nachricht";
    FormatDiscordCard => "Discord status card", "Discord-Statuskarte";
    WebhookCardNote => "One message in the channel, kept up to date: the selected servers (the 10 busiest) with players and lobby, edited at most every 10 seconds.", "Eine Nachricht im Kanal, stets aktuell: die gewählten Server (die 10 vollsten) mit Spielern und Lobby, höchstens alle 10 Sekunden bearbeitet.";
    CardPreview => "Preview: the message as the channel would show it now (its words are the bridge's, in English)", "Vorschau: die Nachricht, wie der Kanal sie jetzt zeigen würde (ihr Text ist der der Bridge, auf Englisch)";
    CardPreviewLoading => "Loading the preview…", "Vorschau wird geladen…";
    CardPreviewWaits => "The preview appears once the servers are valid.", "Die Vorschau erscheint, sobald die Server gültig sind.";
    RefreshPreview => "Refresh the preview", "Vorschau aktualisieren";
    ShowPreview => "Show the preview", "Vorschau zeigen";
    HidePreview => "Hide the preview", "Vorschau ausblenden";
    WebhookEvents => "Events", "Ereignisse";
    EventServerOnline => "comes online", "kommt online";
    EventServerOffline => "goes offline", "geht offline";
    EventLobbyOpened => "opens its lobby", "öffnet seine Lobby";
    EventPlayersReached => "reaches a number of players", "erreicht eine Spielerzahl";
    EventTest => "test", "Test";
    WebhookServers => "Servers", "Server";
    WebhookAllServers => "All servers", "Alle Server";
    WebhookKeys => "These server keys", "Diese Serverschlüssel";
    WebhookNameContains => "Names containing a text", "Namen mit einem Text";
    WebhookKeysLabel => "Server keys, separated by commas", "Serverschlüssel, durch Kommas getrennt";
    WebhookNameLabel => "Text in the name", "Text im Namen";
    WebhookThreshold => "At least this many players", "Mindestens so viele Spieler";
    WebhookCooldown => "Cooldown (seconds)", "Pause (Sekunden)";
    CreateWebhook => "Create webhook", "Webhook anlegen";
    WebhookSecretOnce => "The signing secret of the new webhook. It is shown only now: copy it to the receiver.", "Das Signaturgeheimnis des neuen Webhooks. Es wird nur jetzt gezeigt: Kopiere es zum Empfänger.";
    CopySecret => "Copy the secret", "Geheimnis kopieren";
    Done => "Done", "Fertig";
    NoWebhooks => "No webhooks yet.", "Noch keine Webhooks.";
    PushTitle => "Web Push", "Web Push";
    PushHelp => "Players' push subscriptions, by the address (IPv6: the /64) each was made from. When the bridge holds as many as it takes, the address holding the most gives up its oldest to a new player; a subscription the player's page does not renew is deleted.", "Die Push-Abonnements der Spieler, nach der Adresse (IPv6: dem /64), von der jedes kam. Hält die Bridge so viele, wie sie nimmt, gibt die Adresse mit den meisten ihr ältestes für einen neuen Spieler ab; ein Abonnement, das die Seite des Spielers nicht erneuert, wird gelöscht.";
    LoadingPush => "Loading the push subscriptions…", "Push-Abonnements werden geladen…";
    PushOff => "Web Push is off. The bridge says: {}", "Web Push ist aus. Die Bridge meldet: {}";
    PushOn => "Web Push is on; push services may contact {}.", "Web Push ist an; Push-Dienste können {} kontaktieren.";
    PushCounts => "{} subscriptions of at most {}; at most {} per address; kept {} days without renewal.", "{} Abonnements von höchstens {}; höchstens {} pro Adresse; ohne Erneuerung {} Tage behalten.";
    NoPushSources => "No push subscriptions.", "Keine Push-Abonnements.";
    PushSource => "Address", "Adresse";
    PushSubscriptions => "Subscriptions", "Abonnements";
    PushOldest => "Oldest", "Ältestes";
    PushPurge => "Delete all", "Alle löschen";
    PushPurgeSource => "Delete every subscription from {}", "Alle Abonnements von {} löschen";
    LoadingWebhooks => "Loading the webhooks…", "Webhooks werden geladen…";
    WebhooksUnreachable => "The bridge did not answer. Try again.", "Die Bridge hat nicht geantwortet. Versuche es noch einmal.";
    WebhookActive => "active", "aktiv";
    WebhookDisabled => "disabled", "deaktiviert";
    WebhookDisabledAfter => "disabled after {} failed deliveries in a row", "deaktiviert nach {} fehlgeschlagenen Zustellungen in Folge";
    Enable => "Enable", "Aktivieren";
    Disable => "Disable", "Deaktivieren";
    SendTest => "Send a test", "Test senden";
    Delete => "Delete", "Löschen";
    WebhookTo => "Webhook to {}", "Webhook an {}";
    LastDeliveries => "Last deliveries to {}", "Letzte Zustellungen an {}";
    NothingSent => "Nothing sent yet.", "Noch nichts gesendet.";
    Event => "Event", "Ereignis";
    Outcome => "Result", "Ergebnis";
    Delivered => "delivered", "zugestellt";
    DeliveryFailed => "failed: {}", "fehlgeschlagen: {}";
    NoAnswer => "no answer", "keine Antwort";
    AttemptsCount => "{} attempts", "{} Versuche";
    // Notifications: the "Notify me" control and what it shows.
    NotifyMe => "Notify me", "Benachrichtige mich";
    NotifyMeAbout => "Notify me about {}", "Benachrichtigungen zu {}";
    NotifyWhen => "Tell me when this server…", "Sag mir Bescheid, wenn dieser Server…";
    NotifyOnline => "comes online", "online kommt";
    NotifyLobby => "opens its lobby", "seine Lobby öffnet";
    NotifyPlayers => "has at least this many players:", "mindestens so viele Spieler hat:";
    NotifyPlayerCount => "Number of players", "Anzahl der Spieler";
    NotifyTurnOn => "Turn on", "Einschalten";
    NotifyTurnOff => "Turn off", "Ausschalten";
    NotifyChange => "Change", "Ändern";
    NotifyCancel => "Cancel", "Abbrechen";
    NotifyWorking => "Turning on…", "Wird eingeschaltet…";
    NotifyPickOne => "Choose at least one, and a number of players from 1 to 255.", "Wähle mindestens eins, und eine Spielerzahl von 1 bis 255.";
    NotifyFull => "You already watch 20 servers: turn one off first.", "Du beobachtest schon 20 Server: Schalte erst einen aus.";
    NotifyOnPush => "On: you get a notification even while this page is closed.", "An: Du bekommst eine Benachrichtigung, auch wenn diese Seite geschlossen ist.";
    NotifyOnTab => "On while a lobby page is open in this browser.", "An, solange eine Seite der Lobby in diesem Browser offen ist.";
    NotifyPushOff => "On while a lobby page is open in this browser: this lobby sends no push notifications (it has no contact address for the browsers' push services).", "An, solange eine Seite der Lobby in diesem Browser offen ist: Diese Lobby sendet keine Push-Benachrichtigungen (ihr fehlt eine Kontaktadresse für die Push-Dienste der Browser).";
    NotifyDenied => "Notifications are blocked for this site: an open lobby page shows them itself.", "Benachrichtigungen sind für diese Seite blockiert: Eine offene Seite der Lobby zeigt sie selbst an.";
    NotifyOff => "Off: you will not be told about this server.", "Aus: Du wirst über diesen Server nicht benachrichtigt.";
    NotifyNotices => "Notifications", "Benachrichtigungen";
    NotifyDismiss => "Dismiss", "Schließen";
    NotifyBodyOnline => "Online now, {} of {} players", "Jetzt online, {} von {} Spielern";
    NotifyBodyOffline => "Offline", "Offline";
    NotifyBodyLobby => "The lobby is open, {} of {} players", "Die Lobby ist offen, {} von {} Spielern";
    NotifyBodyPlayers => "{} of {} players are in", "{} von {} Spielern sind da";
    // Language switcher.
    Language => "Language", "Sprache";
}

/// The text of `k` in the current language.
pub fn t(k: K) -> &'static str {
    text(lang(), k)
}

/// `k` with its `{}` placeholders filled by `args` in order.
pub fn tf(k: K, args: &[&dyn std::fmt::Display]) -> String {
    fill(t(k), args)
}

fn fill(template: &str, args: &[&dyn std::fmt::Display]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(template.len() + 8);
    let mut args = args.iter();
    let mut parts = template.split("{}");
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for part in parts {
        if let Some(a) = args.next() {
            let _ = write!(out, "{a}");
        }
        out.push_str(part);
    }
    out
}

/// "1 server" / "2 servers" in the current language.
pub fn count(n: u64, one: K, many: K) -> String {
    tf(if n == 1 { one } else { many }, &[&n])
}

/// How long ago `at_ms` was: "just now", "7 s ago", "16 min ago",
/// "3 h ago", "2 d ago".
pub fn ago(now_ms: f64, at_ms: f64) -> String {
    let secs = ((now_ms - at_ms) / 1000.0).floor().max(0.0) as u64;
    match secs {
        0 => t(K::JustNow).to_owned(),
        s if s < 120 => tf(K::SecondsAgo, &[&s]),
        s if s < 7200 => tf(K::MinutesAgo, &[&(s / 60)]),
        s if s < 172_800 => tf(K::HoursAgo, &[&(s / 3600)]),
        s => tf(K::DaysAgo, &[&(s / 86_400)]),
    }
}

/// "updated N s ago" for a list received at `at_ms`.
pub fn ago_text(now_ms: f64, at_ms: f64) -> String {
    tf(K::Updated, &[&ago(now_ms, at_ms)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_both_texts_with_the_same_placeholders() {
        for &k in K::ALL {
            let en = text(Lang::En, k);
            let de = text(Lang::De, k);
            assert!(!en.trim().is_empty(), "{k:?} has no English text");
            assert!(!de.trim().is_empty(), "{k:?} has no German text");
            assert_eq!(
                en.matches("{}").count(),
                de.matches("{}").count(),
                "{k:?}: placeholders differ between {en:?} and {de:?}"
            );
        }
    }

    /// Every visible string goes through the table: no component or page
    /// writes English text into its markup directly (the brand excepted).
    #[test]
    fn markup_has_no_untranslated_text() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut bad = Vec::new();
        // Every folder that holds components; only files with markup.
        for dir in ["components", "pages", "test_servers", "webhooks"] {
            for entry in std::fs::read_dir(root.join(dir)).expect("source dir") {
                let path = entry.expect("dir entry").path();
                let text = std::fs::read_to_string(&path).expect("source file");
                if !text.contains("html!") {
                    continue;
                }
                for (n, line) in text.lines().enumerate() {
                    let line = line.replace("{\" Lobby\"}", "");
                    let text_node = line.match_indices("{\"").any(|(i, _)| {
                        line[i + 2..].starts_with(|c: char| c.is_alphabetic() || c == ' ')
                    });
                    let attr = [
                        "title=\"",
                        "placeholder=\"",
                        "aria-label=\"",
                        "detail=\"",
                        "data-label=\"",
                    ]
                    .iter()
                    .any(|a| {
                        line.match_indices(a)
                            .any(|(i, _)| line[i + a.len()..].starts_with(char::is_alphabetic))
                    });
                    if text_node || attr {
                        bad.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                    }
                }
            }
        }
        assert!(bad.is_empty(), "untranslated text:\n{}", bad.join("\n"));
    }

    #[test]
    fn languages_from_tags() {
        assert_eq!(Lang::parse("de-AT"), Some(Lang::De));
        assert_eq!(Lang::parse("EN_us"), Some(Lang::En));
        assert_eq!(Lang::parse("fr"), None);
        assert_eq!(Lang::parse(""), None);
        assert_eq!(Lang::pick(["fr-FR", "de", "en"]), Lang::De);
        assert_eq!(Lang::pick(["fr-FR"]), Lang::En);
        for l in Lang::ALL {
            assert_eq!(Lang::parse(l.code()), Some(l));
        }
    }

    #[test]
    fn placeholders_fill_in_order() {
        assert_eq!(fill("{} of {}", &[&1, &"two"]), "1 of two");
        assert_eq!(fill("none", &[&1]), "none");
        assert_eq!(fill("{} and {}", &[&1]), "1 and ");
        set_lang(Lang::De);
        assert_eq!(count(2, K::ServerOne, K::ServerMany), "2 Server");
        set_lang(Lang::En);
        assert_eq!(count(1, K::ServerOne, K::ServerMany), "1 server");
        assert_eq!(count(2, K::PlayerOne, K::PlayerMany), "2 players");
    }

    #[test]
    fn how_long_ago() {
        assert_eq!(ago_text(10_000.0, 9_500.0), "updated just now");
        assert_eq!(ago_text(10_000.0, 3_000.0), "updated 7 s ago");
        assert_eq!(ago_text(1_000_000.0, 0.0), "updated 16 min ago");
        assert_eq!(ago(10_000_000.0, 0.0), "2 h ago");
        assert_eq!(ago(200_000_000.0, 0.0), "2 d ago");
    }
}
