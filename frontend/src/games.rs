//! Other games' servers (`bridgeGameServers`) as the page shows them: tab
//! labels, stable keys for `server=` links, what the shared list code
//! ([`crate::list`]) asks of a row, and the labels of each cell and of the
//! details. Plain functions over plain data, tested natively.

use std::{cmp::Ordering, collections::HashMap, rc::Rc};

use protocol::bridge::{GameRule, GameServer, GameSource, GameSourceKind};

use crate::{
    favourites::server_key,
    i18n::{count, t, K},
    list::{self, ListRow},
    query::{ListQuery, SortKey},
};

/// One server of a source plus what the view needs precomputed.
#[derive(Debug, Clone, PartialEq)]
pub struct GameRow {
    pub server: GameServer,
    /// Unique within the source and stable across refreshes: Yew's key and
    /// the `server=` value of the detail link.
    pub key: Rc<str>,
    /// The name as shown: the server's name, or its address while it does
    /// not answer.
    pub title: Rc<str>,
    pub name_lc: Rc<str>,
    /// Game, map and address lowercased, for search.
    pub haystack_lc: Rc<str>,
}

/// `host:port` of a server, with IPv6 addresses in brackets; `None` when
/// the bridge hides addresses.
pub fn address_label(s: &GameServer) -> Option<String> {
    list::address_label(s.address.as_deref(), s.port)
}

/// The server's key within its source: its address when known (what a
/// player would share), else its name; repeated keys get `#2`, `#3`, ….
pub fn rows(source: &GameSource) -> Vec<GameRow> {
    let mut seen: HashMap<String, u32> = HashMap::new();
    source
        .servers
        .iter()
        .map(|server| {
            let base = address_label(server).unwrap_or_else(|| server.name.clone());
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            let key = if *n == 1 { base } else { format!("{base}#{n}") };
            let title = if server.name.trim().is_empty() {
                address_label(server).unwrap_or_else(|| t(K::UnnamedServer).to_owned())
            } else {
                server.name.clone()
            };
            let haystack = format!(
                "{}\u{1f}{}\u{1f}{}",
                server.game,
                server.map,
                address_label(server).unwrap_or_default()
            );
            GameRow {
                name_lc: title.to_lowercase().into(),
                haystack_lc: haystack.to_lowercase().into(),
                title: title.into(),
                key: key.into(),
                server: server.clone(),
            }
        })
        .collect()
}

/// The source with this id.
pub fn find<'a>(sources: &'a [GameSource], id: &str) -> Option<&'a GameSource> {
    sources.iter().find(|s| s.id == id)
}

/// The tab's heading: the game the source's servers play (what a player
/// looks for), or what kind of source it is while none answers.
pub fn tab_title(source: &GameSource) -> String {
    let game = source
        .servers
        .iter()
        .find(|s| s.online && !s.game.trim().is_empty())
        .map(|s| s.game.trim().to_owned());
    match (game, source.kind) {
        (Some(game), _) => game,
        (None, GameSourceKind::A2s) => t(K::ValveServer).to_owned(),
        (None, GameSourceKind::GameAgent) => t(K::SeriousSamServers).to_owned(),
    }
}

/// The tab's second line: where the servers come from.
pub fn tab_subtitle(source: &GameSource) -> String {
    match source.kind {
        GameSourceKind::A2s => format!("A2S · {}", source.label),
        GameSourceKind::GameAgent => format!("GameAgent · {}", source.label),
    }
}

/// Servers that answered.
pub fn online_count(source: &GameSource) -> usize {
    source.servers.iter().filter(|s| s.online).count()
}

impl ListRow for GameRow {
    const COUNTED: K = K::OnlineCount;

    fn key(&self) -> &Rc<str> {
        &self.key
    }

    fn title(&self) -> &str {
        &self.title
    }

    fn name_lc(&self) -> &str {
        &self.name_lc
    }

    /// Game, map and address.
    fn search_lc(&self) -> Option<&str> {
        Some(&self.haystack_lc)
    }

    /// A server that does not answer says 0 slots: unknown, never full.
    fn players(&self) -> (u32, Option<u32>) {
        let s = &self.server;
        (s.players, (s.max_players > 0).then_some(s.max_players))
    }

    fn online(&self) -> bool {
        self.server.online
    }

    fn counted(&self) -> bool {
        self.server.online
    }

    /// Its key within the source (its address when known).
    fn mark_key(&self, source: &str) -> String {
        server_key(source, Some(&self.key), "")
    }

    /// The lobby's own filters (open lobbies, mode) do not apply here.
    fn own_filters(&self, _: &ListQuery) -> bool {
        true
    }

    fn compare_own(&self, other: &Self, key: SortKey) -> Ordering {
        let (sa, sb) = (&self.server, &other.server);
        match key {
            SortKey::Game => sa.game.to_lowercase().cmp(&sb.game.to_lowercase()),
            SortKey::Map => sa.map.to_lowercase().cmp(&sb.map.to_lowercase()),
            // Unknown pings (offline servers) last when ascending.
            SortKey::Ping => sa
                .ping_ms
                .unwrap_or(u32::MAX)
                .cmp(&sb.ping_ms.unwrap_or(u32::MAX)),
            _ => Ordering::Equal,
        }
    }
}

/// The players cell: `12/32`, with bots when there are any; a dash while
/// the server does not answer.
pub fn players_label(s: &GameServer) -> String {
    if !s.online {
        return "—".to_owned();
    }
    let mut text = format!("{}/{}", s.players, s.max_players);
    if s.bots > 0 {
        text.push_str(&format!(
            " ({})",
            count(u64::from(s.bots), K::BotOne, K::BotMany)
        ));
    }
    text
}

/// A ping in milliseconds (`<1 ms` on a local network), or a dash when
/// unknown.
pub fn ping_label(ms: Option<u32>) -> String {
    match ms {
        None => "—".to_owned(),
        Some(0) => "<1 ms".to_owned(),
        Some(ms) => format!("{ms} ms"),
    }
}

/// Time on the server: `0:05`, `1:05`, `12:03:04`.
pub fn duration_label(secs: u32) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// A yes/no field the protocol may not have (A2S has password and VAC,
/// GameAgent neither).
pub fn flag_label(v: Option<bool>, yes: &'static str, no: &'static str) -> Option<&'static str> {
    v.map(|v| if v { yes } else { no })
}

/// The players of a detail view, best score first, then by name.
pub fn players_by_score(s: &GameServer) -> Vec<&protocol::bridge::GamePlayer> {
    let mut players: Vec<_> = s.player_list.iter().collect();
    players.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.name.cmp(&b.name)));
    players
}

/// The rules whose name or value contains `filter` (case-insensitive), in
/// the server's order: servers send hundreds, players look for one.
pub fn filter_rules<'a>(rules: &'a [GameRule], filter: &str) -> Vec<&'a GameRule> {
    let needle = filter.trim().to_lowercase();
    rules
        .iter()
        .filter(|r| {
            needle.is_empty()
                || r.name.to_lowercase().contains(&needle)
                || r.value.to_lowercase().contains(&needle)
        })
        .collect()
}

/// A Steam link that joins an A2S server, when its address is known.
pub fn join_link(kind: GameSourceKind, s: &GameServer) -> Option<String> {
    match kind {
        GameSourceKind::A2s if s.online => address_label(s).map(|a| format!("steam://connect/{a}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use protocol::bridge::GamePlayer;

    use super::*;
    use crate::list::{summarize, summary_text, visible};

    fn server(name: &str, map: &str, players: u32, max: u32, ping: Option<u32>) -> GameServer {
        GameServer {
            address: Some("127.0.0.1".into()),
            port: Some(27000 + players as u16),
            online: true,
            name: name.into(),
            map: map.into(),
            game: "Counter-Strike: Source".into(),
            players,
            max_players: max,
            ping_ms: ping,
            ..GameServer::default()
        }
    }

    fn source(servers: Vec<GameServer>) -> GameSource {
        GameSource {
            id: "gameagent:m:9005".into(),
            kind: GameSourceKind::GameAgent,
            label: "m:9005".into(),
            error: None,
            note: None,
            servers,
        }
    }

    fn names(rows: &[GameRow], idx: &[usize]) -> Vec<String> {
        idx.iter().map(|&i| rows[i].title.to_string()).collect()
    }

    fn four() -> Vec<GameRow> {
        let offline = GameServer {
            address: Some("10.0.0.9".into()),
            port: Some(25600),
            online: false,
            error: Some("timed out".into()),
            ..GameServer::default()
        };
        rows(&source(vec![
            server("Bravo", "de_nuke", 5, 16, Some(40)),
            server("alpha", "cs_office", 16, 16, Some(80)),
            offline,
            server("Charlie", "de_dust", 0, 8, Some(10)),
        ]))
    }

    #[test]
    fn keys_and_titles() {
        let mut dup = server("x", "m", 1, 2, None);
        dup.port = Some(1);
        let mut v6 = dup.clone();
        v6.address = Some("::1".into());
        let mut hidden = dup.clone();
        hidden.address = None;
        hidden.port = None;
        let r = rows(&source(vec![dup.clone(), dup, v6, hidden]));
        let keys: Vec<&str> = r.iter().map(|r| &*r.key).collect();
        assert_eq!(keys, ["127.0.0.1:1", "127.0.0.1:1#2", "[::1]:1", "x"]);
        let r = four();
        assert_eq!(&*r[2].title, "10.0.0.9:25600");
        assert_eq!(&*r[1].name_lc, "alpha");
    }

    #[test]
    fn sorting_and_filters() {
        let r = four();
        let q = |s: &str| ListQuery::from_query_str(s);
        // Servers that do not answer come last in every order.
        assert_eq!(
            names(&r, &visible(&r, &q(""))),
            ["alpha", "Bravo", "Charlie", "10.0.0.9:25600"]
        );
        assert_eq!(
            names(&r, &visible(&r, &q("sort=players"))),
            ["alpha", "Bravo", "Charlie", "10.0.0.9:25600"]
        );
        assert_eq!(
            names(&r, &visible(&r, &q("sort=players&dir=asc"))),
            ["Charlie", "Bravo", "alpha", "10.0.0.9:25600"]
        );
        assert_eq!(
            names(&r, &visible(&r, &q("sort=ping"))),
            ["Charlie", "Bravo", "alpha", "10.0.0.9:25600"]
        );
        assert_eq!(
            names(&r, &visible(&r, &q("sort=map&dir=desc"))),
            ["Bravo", "Charlie", "alpha", "10.0.0.9:25600"]
        );
        assert_eq!(
            names(&r, &visible(&r, &q("sort=name&dir=desc"))),
            ["Charlie", "Bravo", "alpha", "10.0.0.9:25600"]
        );
        assert_eq!(
            names(&r, &visible(&r, &q("hidefull=1&hideempty=1"))),
            ["Bravo"]
        );
        // Search covers name, map, game and address.
        assert_eq!(names(&r, &visible(&r, &q("q=DUST"))), ["Charlie"]);
        assert_eq!(names(&r, &visible(&r, &q("q=10.0.0"))), ["10.0.0.9:25600"]);
        assert_eq!(visible(&r, &q("q=counter-strike")).len(), 3);
        // Lobby-only filters do not apply here.
        assert_eq!(visible(&r, &q("open=1&mode=2")).len(), 4);
    }

    #[test]
    fn labels() {
        let r = four();
        let text = |rows: &[GameRow]| summary_text::<GameRow>(summarize(rows));
        assert_eq!(text(&r), "4 servers · 21 players · 3 online");
        assert_eq!(text(&r[..1]), "1 server · 5 players · 1 online");
        let mut s = server("a", "m", 1, 8, Some(3));
        assert_eq!(players_label(&s), "1/8");
        s.bots = 1;
        assert_eq!(players_label(&s), "1/8 (1 bot)");
        assert_eq!(players_label(&r[2].server), "—");
        assert_eq!(ping_label(Some(3)), "3 ms");
        assert_eq!(ping_label(None), "—");
        assert_eq!(ping_label(Some(0)), "<1 ms");
        assert_eq!(duration_label(5), "0:05");
        assert_eq!(duration_label(65), "1:05");
        assert_eq!(duration_label(12 * 3600 + 184), "12:03:04");
        assert_eq!(flag_label(None, "y", "n"), None);
        assert_eq!(flag_label(Some(false), "y", "n"), Some("n"));
        assert_eq!(
            join_link(GameSourceKind::A2s, &s).as_deref(),
            Some("steam://connect/127.0.0.1:27001")
        );
        assert_eq!(join_link(GameSourceKind::GameAgent, &s), None);
    }

    #[test]
    fn tabs() {
        let mut src = source(vec![]);
        assert_eq!(tab_title(&src), "Serious Sam servers");
        assert_eq!(tab_subtitle(&src), "GameAgent · m:9005");
        src.servers = four().into_iter().map(|r| r.server).collect();
        assert_eq!(tab_title(&src), "Counter-Strike: Source");
        assert_eq!(online_count(&src), 3);
        let sources = [src];
        assert!(find(&sources, "gameagent:m:9005").is_some());
        assert!(find(&sources, "a2s:m:9005").is_none());
    }

    #[test]
    fn rule_filter() {
        let rules: Vec<GameRule> = [
            ("sv_gravity", "800"),
            ("mp_timelimit", "30"),
            ("Gravity2", "x"),
        ]
        .into_iter()
        .map(|(n, v)| GameRule {
            name: n.into(),
            value: v.into(),
        })
        .collect();
        let names = |f: &str| -> Vec<String> {
            filter_rules(&rules, f)
                .iter()
                .map(|r| r.name.clone())
                .collect()
        };
        assert_eq!(names(" GRAV "), ["sv_gravity", "Gravity2"]);
        assert_eq!(names("30"), ["mp_timelimit"]);
        assert_eq!(names("").len(), 3);
        assert!(names("nothing").is_empty());
    }

    #[test]
    fn players_best_first() {
        let mut s = server("a", "m", 3, 8, None);
        s.player_list = [("b", 1), ("c", 9), ("a", 1)]
            .into_iter()
            .map(|(n, score)| GamePlayer {
                name: n.into(),
                score,
                ..GamePlayer::default()
            })
            .collect();
        let order: Vec<&str> = players_by_score(&s)
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(order, ["c", "a", "b"]);
    }
}
