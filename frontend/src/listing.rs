//! The lobby's own servers as the page shows them: rows with stable keys
//! built from the master's entries, what the shared list code
//! ([`crate::list`]) asks of a row, and the labels of the lobby's cells.
//! Plain functions over plain data, tested natively.

use std::{cmp::Ordering, collections::HashMap, rc::Rc};

use protocol::{GameplayMode, ServerEntry};

use crate::{
    favourites::{server_key, Marks},
    i18n::{t, tf, K},
    list::{self, ListRow},
    query::{ListQuery, SortKey},
};

/// One listed server plus what the view needs precomputed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Shared, so copying the rows for an update copies no strings.
    pub entry: Rc<ServerEntry>,
    /// The bridge's id for the entry (`docs/protocol.md` §3), 0 in a
    /// whole list (`msRQueryGameServers`), which has none.
    pub id: u64,
    /// Unique within a list and stable across updates: Yew's key.
    pub key: Rc<str>,
    /// The name lowercased once, for search and sorting.
    pub name_lc: Rc<str>,
    /// The address lowercased once, for search.
    pub addr_lc: Option<Rc<str>>,
    /// The list version in which this row last appeared or changed (0 for
    /// rows of the first list, which do not flash).
    pub changed_in: u32,
}

/// The identity of a server across updates, its name and where it runs,
/// written into `out` (a buffer reused across rows).
fn identity(e: &ServerEntry, out: &mut String) {
    use std::fmt::Write;
    out.clear();
    out.push_str(&e.name);
    out.push('\u{1f}');
    out.push_str(e.address.as_deref().unwrap_or(""));
    out.push('\u{1f}');
    if let Some(p) = e.port {
        let _ = write!(out, "{p}");
    }
}

pub(crate) fn lowercase(s: &str) -> Rc<str> {
    if s.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        s.to_lowercase().into()
    } else {
        s.into()
    }
}

/// Builds rows for a new list, marking what changed since `previous`.
/// Identical identities (possible when the bridge hides addresses) get a
/// numeric suffix so keys stay unique. One pass with a map of the old rows
/// by key; a row whose key was there before reuses its key and lowercased
/// texts instead of allocating them again.
pub fn build_rows(entries: Vec<ServerEntry>, previous: &[Row], version: u32) -> Vec<Row> {
    let mut base = String::new();
    // The usual update: the same servers in the same order. When every
    // identity equals the previous key at its position, the identities are
    // all distinct (those keys were unique), so they are the keys; no maps.
    let same_servers = entries.len() == previous.len()
        && entries.iter().zip(previous).all(|(e, p)| {
            identity(e, &mut base);
            base == *p.key
        });
    if same_servers {
        return entries
            .into_iter()
            .zip(previous)
            .map(|(entry, prev)| Row {
                changed_in: if *prev.entry == entry {
                    prev.changed_in
                } else {
                    version
                },
                entry: Rc::new(entry),
                id: 0,
                key: prev.key.clone(),
                name_lc: prev.name_lc.clone(),
                addr_lc: prev.addr_lc.clone(),
            })
            .collect();
    }
    let old: HashMap<&str, &Row> = previous.iter().map(|r| (&*r.key, r)).collect();
    // How often each identity was seen so far in this list.
    let mut seen: HashMap<Rc<str>, u32> = HashMap::with_capacity(entries.len());
    entries
        .into_iter()
        .map(|entry| {
            identity(&entry, &mut base);
            let (key, prev) = match seen.get_mut(base.as_str()) {
                Some(n) => {
                    *n += 1;
                    let key: Rc<str> = format!("{base}\u{1f}{n}").into();
                    let prev = old.get(&*key).copied();
                    (key, prev)
                }
                None => {
                    let prev = old.get(base.as_str()).copied();
                    let key: Rc<str> = prev.map_or_else(|| base.as_str().into(), |p| p.key.clone());
                    seen.insert(key.clone(), 1);
                    (key, prev)
                }
            };
            let changed_in = match prev {
                Some(prev) if *prev.entry == entry => prev.changed_in,
                _ if previous.is_empty() => 0,
                _ => version,
            };
            // The identity holds name and address, so a previous row with
            // this key has the same texts.
            let (name_lc, addr_lc) = match prev {
                Some(prev) => (prev.name_lc.clone(), prev.addr_lc.clone()),
                None => (
                    lowercase(&entry.name),
                    entry.address.as_deref().map(lowercase),
                ),
            };
            Row {
                entry: Rc::new(entry),
                id: 0,
                key,
                name_lc,
                addr_lc,
                changed_in,
            }
        })
        .collect()
}

impl ListRow for Row {
    const COUNTED: K = K::OpenCount;

    fn key(&self) -> &Rc<str> {
        &self.key
    }

    fn title(&self) -> &str {
        &self.entry.name
    }

    fn name_lc(&self) -> &str {
        &self.name_lc
    }

    fn search_lc(&self) -> Option<&str> {
        self.addr_lc.as_deref()
    }

    fn players(&self) -> (u32, Option<u32>) {
        let p = self.entry.stats.players;
        (p.current, Some(u32::from(p.max)))
    }

    fn online(&self) -> bool {
        true
    }

    fn counted(&self) -> bool {
        self.entry.stats.is_lobby_open
    }

    /// Its address and port (so a renamed server is still found), else its
    /// name.
    fn mark_key(&self, source: &str) -> String {
        server_key(
            source,
            address_label(&self.entry).as_deref(),
            &self.entry.name,
        )
    }

    fn own_filters(&self, q: &ListQuery) -> bool {
        let s = &self.entry.stats;
        (s.is_lobby_open || !q.open_only) && q.mode.is_none_or(|m| m == s.gameplay_mode)
    }

    fn compare_own(&self, other: &Self, key: SortKey) -> Ordering {
        let (sa, sb) = (&self.entry.stats, &other.entry.stats);
        match key {
            // Ascending puts open lobbies first.
            SortKey::Lobby => sb.is_lobby_open.cmp(&sa.is_lobby_open),
            SortKey::Mode => sa.gameplay_mode.cmp(&sb.gameplay_mode),
            _ => Ordering::Equal,
        }
    }
}

/// The `source` part of the lobby's own servers' mark keys.
pub const LOBBY_SOURCE: &str = "lobby";

/// The lobby's servers to show, filtered and sorted, favourites pinned
/// first (see [`list::arrange_rows`]).
pub fn arrange_rows(rows: &[Row], q: &ListQuery, marks: &Marks) -> list::Arranged {
    list::arrange_rows(rows, q, marks, LOBBY_SOURCE)
}

/// The players cell: `2/4`, `4/4 full`, `4/4 +3 queued`.
pub fn players_label(current: u32, max: u8) -> String {
    let max32 = u32::from(max);
    match current.cmp(&max32) {
        Ordering::Less => format!("{current}/{max}"),
        Ordering::Equal => tf(K::PlayersFull, &[&current, &max]),
        Ordering::Greater => tf(K::PlayersQueued, &[&max, &max, &(current - max32)]),
    }
}

pub fn lobby_label(open: bool) -> &'static str {
    t(if open { K::Open } else { K::InGame })
}

pub fn mode_label(mode: GameplayMode) -> &'static str {
    mode.label()
}

/// `host:port`, with IPv6 addresses in brackets; `None` when hidden.
pub fn address_label(e: &ServerEntry) -> Option<String> {
    list::address_label(e.address.as_deref(), e.port)
}

#[cfg(test)]
pub(crate) mod tests {
    use protocol::{Players, Stats};

    use super::*;
    use crate::list::{summarize, summary_text, visible, Summary};

    pub(crate) fn entry(name: &str, cur: u32, max: u8, open: bool, mode: u64) -> ServerEntry {
        ServerEntry {
            name: name.into(),
            address: Some(format!("{}.example.org", name.len())),
            port: Some(20000),
            stats: Stats {
                players: Players { current: cur, max },
                is_lobby_open: open,
                gameplay_mode: GameplayMode::from_wire(mode).unwrap_or(GameplayMode::StandardA),
            },
        }
    }

    fn sample() -> Vec<Row> {
        build_rows(
            vec![
                entry("bravo", 2, 4, true, 1),
                entry("Alpha", 4, 4, false, 2),
                entry("轰炸机人", 22, 4, false, 2),
                entry("Server von Bösewicht", 0, 3, true, 1),
                entry("charlie", 1, 2, true, 2),
            ],
            &[],
            1,
        )
    }

    fn names(rows: &[Row], q: &ListQuery) -> Vec<String> {
        visible(rows, q)
            .into_iter()
            .map(|i| rows[i].entry.name.clone())
            .collect()
    }

    #[test]
    fn sorts_by_each_column() {
        let rows = sample();
        let q = |s: &str| ListQuery::from_query_str(s);
        assert_eq!(
            names(&rows, &q("")),
            [
                "Alpha",
                "bravo",
                "charlie",
                "Server von Bösewicht",
                "轰炸机人"
            ]
        );
        assert_eq!(
            names(&rows, &q("dir=desc")),
            [
                "轰炸机人",
                "Server von Bösewicht",
                "charlie",
                "bravo",
                "Alpha"
            ]
        );
        assert_eq!(
            names(&rows, &q("sort=players")),
            [
                "轰炸机人",
                "Alpha",
                "bravo",
                "charlie",
                "Server von Bösewicht"
            ]
        );
        assert_eq!(
            names(&rows, &q("sort=free")),
            [
                "Server von Bösewicht",
                "bravo",
                "charlie",
                "Alpha",
                "轰炸机人"
            ]
        );
        // Ties keep A→Z whatever the direction.
        assert_eq!(
            names(&rows, &q("sort=lobby")),
            [
                "bravo",
                "charlie",
                "Server von Bösewicht",
                "Alpha",
                "轰炸机人"
            ]
        );
        assert_eq!(
            names(&rows, &q("sort=lobby&dir=desc")),
            [
                "Alpha",
                "轰炸机人",
                "bravo",
                "charlie",
                "Server von Bösewicht"
            ]
        );
        assert_eq!(
            names(&rows, &q("sort=mode")),
            [
                "bravo",
                "Server von Bösewicht",
                "Alpha",
                "charlie",
                "轰炸机人"
            ]
        );
    }

    #[test]
    fn filters_and_search() {
        let rows = sample();
        let q = |s: &str| ListQuery::from_query_str(s);
        assert_eq!(
            names(&rows, &q("open=1")),
            ["bravo", "charlie", "Server von Bösewicht"]
        );
        assert_eq!(
            names(&rows, &q("hidefull=1")),
            ["bravo", "charlie", "Server von Bösewicht"]
        );
        assert_eq!(
            names(&rows, &q("hideempty=1")),
            ["Alpha", "bravo", "charlie", "轰炸机人"]
        );
        assert_eq!(names(&rows, &q("mode=2")), ["Alpha", "charlie", "轰炸机人"]);
        assert_eq!(names(&rows, &q("q=BÖSE")), ["Server von Bösewicht"]);
        assert_eq!(names(&rows, &q("q=%E7%82%B8")), ["轰炸机人"]);
        assert_eq!(names(&rows, &q("q=+alp+")), ["Alpha"]);
        // Addresses are searchable too.
        assert_eq!(names(&rows, &q("q=21.example")), ["Server von Bösewicht"]);
        assert!(names(&rows, &q("q=nothing")).is_empty());
    }

    #[test]
    fn keys_are_stable_and_unique_and_changes_flash() {
        let first = sample();
        assert!(first.iter().all(|r| r.changed_in == 0));
        let mut next: Vec<ServerEntry> = first.iter().map(|r| (*r.entry).clone()).collect();
        next[0].stats.players.current = 3;
        next.push(entry("delta", 0, 2, true, 1));
        let second = build_rows(next, &first, 2);
        assert_eq!(second[0].key, first[0].key);
        assert!(Rc::ptr_eq(&second[1].key, &first[1].key));
        assert_eq!(second[0].changed_in, 2);
        assert_eq!(second[1].changed_in, 0);
        assert_eq!(second[5].changed_in, 2);
        let third = build_rows(
            second.iter().map(|r| (*r.entry).clone()).collect(),
            &second,
            3,
        );
        assert_eq!(third[0].changed_in, 2);
        // Same servers in the same order: keys are reused, changes flash.
        let mut same: Vec<ServerEntry> = third.iter().map(|r| (*r.entry).clone()).collect();
        same[3].stats.is_lobby_open = !same[3].stats.is_lobby_open;
        let fourth = build_rows(same, &third, 4);
        assert!(fourth
            .iter()
            .zip(&third)
            .all(|(a, b)| Rc::ptr_eq(&a.key, &b.key)));
        assert_eq!(
            fourth.iter().map(|r| r.changed_in).collect::<Vec<_>>(),
            [2, 0, 0, 4, 0, 2]
        );

        let mut hidden = entry("same", 1, 4, true, 1);
        hidden.address = None;
        hidden.port = None;
        let dup = build_rows(vec![hidden.clone(), hidden.clone()], &[], 1);
        assert_ne!(dup[0].key, dup[1].key);
        let mut changed = hidden.clone();
        changed.stats.players.current = 2;
        let dup2 = build_rows(vec![hidden.clone(), changed, hidden], &dup, 2);
        assert_eq!(dup2[0].key, dup[0].key);
        assert_eq!(dup2[1].key, dup[1].key);
        assert_eq!(
            dup2.iter().map(|r| r.changed_in).collect::<Vec<_>>(),
            [0, 2, 2]
        );
        assert_eq!(dup2[2].name_lc, dup[0].name_lc);
    }

    #[test]
    fn favourites_pinned_in_every_sort_and_hidden_left_out() {
        let rows = sample();
        let mut m = Marks::default();
        let key = |name: &str| {
            rows.iter()
                .find(|r| r.entry.name == name)
                .unwrap()
                .mark_key(LOBBY_SOURCE)
        };
        m.apply(crate::favourites::MarkAction::ToggleFavourite {
            key: key("charlie"),
            name: "charlie".into(),
            now_ms: 0.0,
        });
        m.apply(crate::favourites::MarkAction::Hide(key("轰炸机人")));
        for sort in [
            "",
            "dir=desc",
            "sort=players",
            "sort=free",
            "sort=lobby",
            "sort=mode&dir=desc",
        ] {
            let a = arrange_rows(&rows, &ListQuery::from_query_str(sort), &m);
            assert_eq!(rows[a.idx[0]].entry.name, "charlie", "{sort}");
            assert_eq!(a.pinned, 1);
            assert!(
                a.idx.iter().all(|&i| rows[i].entry.name != "轰炸机人"),
                "{sort}"
            );
            assert_eq!(a.hidden, 1);
        }
        // Mode 1 does not match charlie (mode 2), yet it stays, marked.
        let a = arrange_rows(&rows, &ListQuery::from_query_str("mode=1"), &m);
        assert_eq!(rows[a.idx[0]].entry.name, "charlie");
        assert_eq!(a.unmatched, [a.idx[0]]);
        assert_eq!(
            a.filtered_out, 1,
            "bravo and Bösewicht match, Alpha not, 轰炸机人 hidden"
        );
        // Renamed, same address: still the favourite.
        let mut renamed: Vec<ServerEntry> = rows.iter().map(|r| (*r.entry).clone()).collect();
        renamed[4].name = "charlie (renamed)".into();
        let rows2 = build_rows(renamed, &rows, 2);
        let a = arrange_rows(&rows2, &ListQuery::default(), &m);
        assert_eq!(rows2[a.idx[0]].entry.name, "charlie (renamed)");
        assert_eq!(a.present[0].1, "charlie (renamed)");
    }

    #[test]
    fn labels() {
        assert_eq!(players_label(2, 4), "2/4");
        assert_eq!(players_label(4, 4), "4/4 full");
        assert_eq!(players_label(22, 4), "4/4 +18 queued");
        let rows = sample();
        let s = summarize(&rows);
        assert_eq!(
            s,
            Summary {
                servers: 5,
                players: 29,
                counted: 3
            }
        );
        assert_eq!(summary_text::<Row>(s), "5 servers · 29 players · 3 open");
        assert_eq!(
            summary_text::<Row>(Summary {
                servers: 1,
                players: 1,
                counted: 0
            }),
            "1 server · 1 player · 0 open"
        );
        let mut e = entry("v6", 0, 2, true, 1);
        e.address = Some("fd40:9dc7:b528::1".into());
        assert_eq!(
            address_label(&e).as_deref(),
            Some("[fd40:9dc7:b528::1]:20000")
        );
        e.address = None;
        assert_eq!(address_label(&e), None);
    }
}
