//! The list view's state as it lives in the URL query (source tab, sort,
//! search, filters, page, open detail, embed theme), parsed leniently so a
//! hand-edited or stale link still opens a sensible view.

use std::cmp::Ordering;

use protocol::GameplayMode;

/// A sortable column. One enum for both tables so `sort=` means the same
/// thing on every tab; a key the current table lacks sorts by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortKey {
    #[default]
    Name,
    Players,
    Free,
    Lobby,
    Mode,
    Game,
    Map,
    Ping,
}

impl SortKey {
    /// Every key.
    pub const ALL: [SortKey; 8] = [
        SortKey::Name,
        SortKey::Players,
        SortKey::Free,
        SortKey::Lobby,
        SortKey::Mode,
        SortKey::Game,
        SortKey::Map,
        SortKey::Ping,
    ];

    /// The lobby table's columns, in table order.
    pub const LOBBY: [SortKey; 5] = [
        SortKey::Name,
        SortKey::Players,
        SortKey::Free,
        SortKey::Lobby,
        SortKey::Mode,
    ];

    /// The other games' table's columns, in table order.
    pub const GAMES: [SortKey; 5] = [
        SortKey::Name,
        SortKey::Game,
        SortKey::Map,
        SortKey::Players,
        SortKey::Ping,
    ];

    /// The value in the URL and in `data-sort`.
    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::Name => "name",
            SortKey::Players => "players",
            SortKey::Free => "free",
            SortKey::Lobby => "lobby",
            SortKey::Mode => "mode",
            SortKey::Game => "game",
            SortKey::Map => "map",
            SortKey::Ping => "ping",
        }
    }

    /// The column heading.
    pub fn label(self) -> &'static str {
        use crate::i18n::{t, K};
        t(match self {
            SortKey::Name => K::Name,
            SortKey::Players => K::Players,
            SortKey::Free => K::FreeSlots,
            SortKey::Lobby => K::Lobby,
            SortKey::Mode => K::Mode,
            SortKey::Game => K::Game,
            SortKey::Map => K::Map,
            SortKey::Ping => K::Ping,
        })
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The direction a first click sorts in: counts start with the biggest.
    pub fn default_dir(self) -> SortDir {
        match self {
            SortKey::Players | SortKey::Free => SortDir::Desc,
            _ => SortDir::Asc,
        }
    }
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortDir {
    #[default]
    Asc,
    Desc,
}

impl SortDir {
    pub fn as_str(self) -> &'static str {
        match self {
            SortDir::Asc => "asc",
            SortDir::Desc => "desc",
        }
    }

    /// The `aria-sort` value of the active column.
    pub fn aria(self) -> &'static str {
        match self {
            SortDir::Asc => "ascending",
            SortDir::Desc => "descending",
        }
    }

    pub fn flip(self) -> Self {
        match self {
            SortDir::Asc => SortDir::Desc,
            SortDir::Desc => SortDir::Asc,
        }
    }
}

/// The embed's colour scheme; `None` follows the system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Theme {
    Light,
    Dark,
}

impl Theme {
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

/// Everything about the list view a link should reproduce.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListQuery {
    /// The selected source of other games' servers (`src=`, a
    /// `GameSource::id`); `None` is the lobby's own list.
    pub source: Option<String>,
    /// The server whose details are open (`server=`, see
    /// `games::server_key`), within `source`.
    pub server: Option<String>,
    pub sort: SortKey,
    pub dir: SortDir,
    /// Free text matched against names and addresses, case-insensitively.
    pub search: String,
    pub open_only: bool,
    pub hide_full: bool,
    pub hide_empty: bool,
    pub mode: Option<GameplayMode>,
    /// Only favourites (`fav=1`).
    pub favourites_only: bool,
    /// No source tabs (`tabs=0`, for embeds that show one list).
    pub hide_tabs: bool,
    /// Zero-based page (the URL shows it one-based).
    pub page: usize,
    pub theme: Option<Theme>,
    /// A development override of the bridge's WebSocket URL; kept so that
    /// changing the view does not lose it.
    pub bridge: Option<String>,
}

fn truthy(v: &str) -> bool {
    matches!(v, "1" | "true" | "yes" | "on")
}

impl ListQuery {
    /// Reads decoded key/value pairs; unknown keys and bad values are ignored.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> Self {
        let mut q = ListQuery::default();
        let mut dir = None;
        for (k, v) in pairs {
            let v = v.as_ref();
            match k.as_ref() {
                "sort" => q.sort = SortKey::parse(v).unwrap_or_default(),
                "dir" => {
                    dir = match v {
                        "asc" => Some(SortDir::Asc),
                        "desc" => Some(SortDir::Desc),
                        _ => None,
                    }
                }
                "q" => q.search = v.to_owned(),
                "open" => q.open_only = truthy(v),
                "hidefull" => q.hide_full = truthy(v),
                "hideempty" => q.hide_empty = truthy(v),
                "fav" => q.favourites_only = truthy(v),
                "tabs" => q.hide_tabs = !truthy(v),
                "mode" => q.mode = v.parse().ok().and_then(|n| GameplayMode::from_wire(n).ok()),
                "page" => q.page = v.parse::<usize>().ok().map_or(0, |p| p.saturating_sub(1)),
                "theme" => {
                    q.theme = match v {
                        "light" => Some(Theme::Light),
                        "dark" => Some(Theme::Dark),
                        _ => None,
                    }
                }
                "bridge" if !v.is_empty() => q.bridge = Some(v.to_owned()),
                "src" if !v.is_empty() => q.source = Some(v.to_owned()),
                "server" if !v.is_empty() => q.server = Some(v.to_owned()),
                _ => {}
            }
        }
        q.dir = dir.unwrap_or(q.sort.default_dir());
        q
    }

    /// Parses a query string with or without its leading `?`.
    pub fn from_query_str(query: &str) -> Self {
        let query = query.strip_prefix('?').unwrap_or(query);
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
        Self::from_pairs(&pairs)
    }

    /// The pairs that differ from the defaults, in a stable order.
    pub fn to_pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(source) = &self.source {
            out.push(("src", source.clone()));
        }
        if self.sort != SortKey::default() {
            out.push(("sort", self.sort.as_str().to_owned()));
        }
        if self.dir != self.sort.default_dir() {
            out.push(("dir", self.dir.as_str().to_owned()));
        }
        if !self.search.is_empty() {
            out.push(("q", self.search.clone()));
        }
        if self.open_only {
            out.push(("open", "1".to_owned()));
        }
        if self.hide_full {
            out.push(("hidefull", "1".to_owned()));
        }
        if self.hide_empty {
            out.push(("hideempty", "1".to_owned()));
        }
        if let Some(mode) = self.mode {
            out.push(("mode", mode.to_wire().to_string()));
        }
        if self.favourites_only {
            out.push(("fav", "1".to_owned()));
        }
        if self.hide_tabs {
            out.push(("tabs", "0".to_owned()));
        }
        if self.page > 0 {
            out.push(("page", (self.page + 1).to_string()));
        }
        if let Some(server) = &self.server {
            out.push(("server", server.clone()));
        }
        if let Some(theme) = self.theme {
            out.push(("theme", theme.as_str().to_owned()));
        }
        if let Some(bridge) = &self.bridge {
            out.push(("bridge", bridge.clone()));
        }
        out
    }

    /// The encoded query string without `?` (empty for the default view).
    pub fn to_query_string(&self) -> String {
        // The serializer serde_urlencoded wraps, without its Result: pairs of
        // strings always encode (the wrapper's error was hidden as "").
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(self.to_pairs())
            .finish()
    }

    /// The view after a click on a column heading: the same column flips its
    /// direction, another column starts in its natural direction. Sorting
    /// returns to the first page.
    pub fn with_sort(&self, key: SortKey) -> Self {
        let dir = if self.sort == key {
            self.dir.flip()
        } else {
            key.default_dir()
        };
        ListQuery {
            sort: key,
            dir,
            page: 0,
            ..self.clone()
        }
    }

    /// Orders two rows as this view sorts: by the column (`column`, the
    /// ascending comparison) in the chosen direction, ties by name A→Z
    /// (Z→A when sorting by name descending). Shared by both tables so
    /// they sort alike.
    pub fn order(&self, column: Ordering, by_name: impl FnOnce() -> Ordering) -> Ordering {
        let column = match self.dir {
            SortDir::Asc => column,
            SortDir::Desc => column.reverse(),
        };
        column.then_with(|| {
            let by_name = by_name();
            if self.sort == SortKey::Name && self.dir == SortDir::Desc {
                by_name.reverse()
            } else {
                by_name
            }
        })
    }

    /// Whether any filter hides servers (used to explain an empty list).
    /// On another game's tab only the filters it shows count.
    pub fn is_filtered(&self) -> bool {
        let lobby_only = self.source.is_none() && (self.open_only || self.mode.is_some());
        !self.search.trim().is_empty()
            || self.hide_full
            || self.hide_empty
            || self.favourites_only
            || lobby_only
    }

    /// The filters a player sets (not the search, sort, tab or page): what
    /// is remembered in localStorage and applied on a bare `/`.
    pub fn filters(&self) -> ListQuery {
        ListQuery {
            open_only: self.open_only,
            hide_full: self.hide_full,
            hide_empty: self.hide_empty,
            mode: self.mode,
            favourites_only: self.favourites_only,
            ..Default::default()
        }
    }

    /// The view after choosing another tab: the search and the filters both
    /// tables share stay, the sort starts over when the new table lacks the
    /// column, and the page and an open detail are dropped.
    pub fn with_source(&self, source: Option<String>) -> Self {
        let columns: &[SortKey] = if source.is_some() {
            &SortKey::GAMES
        } else {
            &SortKey::LOBBY
        };
        let (sort, dir) = if columns.contains(&self.sort) {
            (self.sort, self.dir)
        } else {
            (SortKey::default(), SortKey::default().default_dir())
        };
        ListQuery {
            source,
            server: None,
            sort,
            dir,
            page: 0,
            ..self.clone()
        }
    }

    /// The view without search and filters (the tab, sort, theme, tabs
    /// and bridge stay).
    pub fn cleared(&self) -> Self {
        ListQuery {
            source: self.source.clone(),
            sort: self.sort,
            dir: self.dir,
            theme: self.theme,
            hide_tabs: self.hide_tabs,
            bridge: self.bridge.clone(),
            ..Default::default()
        }
    }

    /// The view with `server`'s details open (or closed with `None`).
    pub fn with_server(&self, server: Option<String>) -> Self {
        ListQuery {
            server,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_view_has_an_empty_query() {
        assert_eq!(ListQuery::default().to_query_string(), "");
        assert_eq!(ListQuery::from_query_str(""), ListQuery::default());
        assert_eq!(ListQuery::from_query_str("?"), ListQuery::default());
    }

    #[test]
    fn round_trip_of_every_field() {
        let q = ListQuery {
            source: Some("a2s:[::1]:27015".into()),
            server: Some("127.0.0.1:27015".into()),
            sort: SortKey::Free,
            dir: SortDir::Asc,
            search: "Bösewicht & 轰炸 + co".into(),
            open_only: true,
            hide_full: true,
            hide_empty: true,
            mode: Some(GameplayMode::StandardAB),
            favourites_only: true,
            hide_tabs: true,
            page: 3,
            theme: Some(Theme::Dark),
            bridge: Some("ws://127.0.0.1:8099/ws".into()),
        };
        let s = q.to_query_string();
        assert!(s.contains("sort=free"), "{s}");
        assert!(s.contains("page=4"), "{s}");
        assert_eq!(ListQuery::from_query_str(&s), q);
        assert_eq!(ListQuery::from_query_str(&format!("?{s}")), q);
    }

    #[test]
    fn lenient_values() {
        let q = ListQuery::from_query_str(
            "sort=bogus&dir=sideways&open=yes&hidefull=0&mode=7&page=zero&theme=pink&x=1",
        );
        assert_eq!(q.sort, SortKey::Name);
        assert_eq!(q.dir, SortDir::Asc);
        assert!(q.open_only);
        assert!(!q.hide_full);
        assert_eq!(q.mode, None);
        assert_eq!(q.page, 0);
        assert_eq!(q.theme, None);
        assert_eq!(ListQuery::from_query_str("page=0").page, 0);
        assert_eq!(ListQuery::from_query_str("%%%=&&=").sort, SortKey::Name);
        // A plus is a space in form encoding.
        assert_eq!(ListQuery::from_query_str("q=a+b").search, "a b");
    }

    #[test]
    fn sort_direction_defaults_per_column() {
        let q = ListQuery::from_query_str("sort=players");
        assert_eq!(q.dir, SortDir::Desc);
        assert_eq!(q.to_query_string(), "sort=players");
        let q = ListQuery::from_query_str("sort=players&dir=asc");
        assert_eq!(q.to_query_string(), "sort=players&dir=asc");
    }

    #[test]
    fn header_clicks() {
        let q = ListQuery {
            page: 5,
            ..Default::default()
        };
        let by_name = q.with_sort(SortKey::Name);
        assert_eq!(
            (by_name.sort, by_name.dir, by_name.page),
            (SortKey::Name, SortDir::Desc, 0)
        );
        let by_players = by_name.with_sort(SortKey::Players);
        assert_eq!(
            (by_players.sort, by_players.dir),
            (SortKey::Players, SortDir::Desc)
        );
        let again = by_players.with_sort(SortKey::Players);
        assert_eq!(again.dir, SortDir::Asc);
    }

    #[test]
    fn filtered() {
        assert!(!ListQuery::default().is_filtered());
        assert!(!ListQuery::from_query_str("q=+++").is_filtered());
        assert!(ListQuery::from_query_str("mode=1").is_filtered());
        assert!(ListQuery::from_query_str("open=1").is_filtered());
        // The lobby-only filters do not hide other games' servers.
        assert!(!ListQuery::from_query_str("src=a2s:h:1&open=1&mode=2").is_filtered());
        assert!(ListQuery::from_query_str("src=a2s:h:1&hideempty=1").is_filtered());
        assert!(ListQuery::from_query_str("fav=1").is_filtered());
        assert!(!ListQuery::from_query_str("tabs=0").is_filtered());
        let saved =
            ListQuery::from_query_str("q=x&sort=free&open=1&mode=2&fav=1&page=3&tabs=0").filters();
        assert_eq!(saved.to_query_string(), "open=1&mode=2&fav=1");
        assert_eq!(
            ListQuery::from_query_str("tabs=0&fav=1&hidefull=1")
                .cleared()
                .to_query_string(),
            "tabs=0"
        );
    }

    #[test]
    fn switching_tabs() {
        let q = ListQuery::from_query_str("sort=free&q=x&hidefull=1&page=3");
        let games = q.with_source(Some("a2s:h:1".into()));
        assert_eq!(games.to_query_string(), "src=a2s%3Ah%3A1&q=x&hidefull=1");
        let q = ListQuery::from_query_str("src=a2s:h:1&sort=players&dir=asc&server=h:1");
        let lobby = q.with_source(None);
        assert_eq!(lobby.to_query_string(), "sort=players&dir=asc");
        let other = q.with_source(Some("gameagent:m:9005".into()));
        assert_eq!(other.server, None);
        assert_eq!(other.sort, SortKey::Players);
        let open = lobby.with_server(Some("h:1".into()));
        assert_eq!(open.server.as_deref(), Some("h:1"));
        assert_eq!(open.with_server(None), lobby);
        let busy = ListQuery::from_query_str("src=s&sort=map&q=x&open=1&page=2&theme=dark");
        assert_eq!(
            busy.cleared().to_query_string(),
            "src=s&sort=map&theme=dark"
        );
    }

    #[test]
    fn every_key_round_trips() {
        for key in SortKey::ALL {
            assert_eq!(SortKey::parse(key.as_str()), Some(key));
        }
    }
}
