//! The list view's state as it lives in the URL query (sort, search,
//! filters, page, embed theme), parsed leniently so a hand-edited or stale
//! link still opens a sensible view.

use protocol::GameplayMode;

/// A sortable column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortKey {
    #[default]
    Name,
    Players,
    Free,
    Lobby,
    Mode,
}

impl SortKey {
    /// Every column, in table order.
    pub const ALL: [SortKey; 5] = [
        SortKey::Name,
        SortKey::Players,
        SortKey::Free,
        SortKey::Lobby,
        SortKey::Mode,
    ];

    /// The value in the URL and in `data-sort`.
    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::Name => "name",
            SortKey::Players => "players",
            SortKey::Free => "free",
            SortKey::Lobby => "lobby",
            SortKey::Mode => "mode",
        }
    }

    /// The column heading.
    pub fn label(self) -> &'static str {
        match self {
            SortKey::Name => "Name",
            SortKey::Players => "Players",
            SortKey::Free => "Free slots",
            SortKey::Lobby => "Lobby",
            SortKey::Mode => "Mode",
        }
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
    pub sort: SortKey,
    pub dir: SortDir,
    /// Free text matched against names and addresses, case-insensitively.
    pub search: String,
    pub open_only: bool,
    pub hide_full: bool,
    pub hide_empty: bool,
    pub mode: Option<GameplayMode>,
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
        if self.page > 0 {
            out.push(("page", (self.page + 1).to_string()));
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
        serde_urlencoded::to_string(self.to_pairs()).unwrap_or_default()
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

    /// Whether any filter hides servers (used to explain an empty list).
    pub fn is_filtered(&self) -> bool {
        !self.search.trim().is_empty()
            || self.open_only
            || self.hide_full
            || self.hide_empty
            || self.mode.is_some()
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
            sort: SortKey::Free,
            dir: SortDir::Asc,
            search: "Bösewicht & 轰炸 + co".into(),
            open_only: true,
            hide_full: true,
            hide_empty: true,
            mode: Some(GameplayMode::StandardAB),
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
    }
}
