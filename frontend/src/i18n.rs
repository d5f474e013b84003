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
}
