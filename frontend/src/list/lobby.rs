//! The lobby's own servers as the page shows them: rows built once per
//! change from the entries of the page's one list (`store`), what the
//! shared list code ([`crate::list`]) asks of a row, and the labels of the
//! lobby's cells. Plain functions over plain data, tested natively.

use std::{cmp::Ordering, rc::Rc};

use protocol::{
    delta::{EntryItem, Keyed, ListItem},
    join::JoinTemplate,
    GameplayMode, ServerEntry, ServerKey,
};

use crate::{
    favourites::{server_key, Marks},
    i18n::{t, tf, K},
    list::{self, ListRow},
    query::{ListQuery, SortKey},
};

/// One listed server plus what the view needs precomputed: what the
/// page's list ([`super::store::LobbyStore`]) keeps for each entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Shared, so copying the rows for an update copies no strings.
    pub entry: Rc<ServerEntry>,
    /// The entry's id in the list (`docs/protocol.md` §3): the bridge's,
    /// or, for a whole list, the page's own numbering.
    pub id: u64,
    /// The id as text, made once: Yew's key.
    pub key: Rc<str>,
    /// The name lowercased once, for search and sorting.
    pub name_lc: Rc<str>,
    /// The address lowercased once, for search.
    pub addr_lc: Option<Rc<str>>,
    /// The server's key (`docs/protocol.md` §4.6), which names its page;
    /// `None` from an older bridge or a whole list without keys.
    pub server: Option<ServerKey>,
}

pub(crate) fn lowercase(s: &str) -> Rc<str> {
    if s.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        s.to_lowercase().into()
    } else {
        s.into()
    }
}

impl ListItem for Row {
    /// A changed entry keeps its row's key, and its lowercased texts when
    /// the texts are the same.
    fn from_keyed(keyed: Keyed, old: Option<&Row>) -> Row {
        let Keyed { id, key, entry } = keyed;
        let name_lc = match old {
            Some(old) if old.entry.name == entry.name => old.name_lc.clone(),
            _ => lowercase(&entry.name),
        };
        let addr_lc = match old {
            Some(old) if old.entry.address == entry.address => old.addr_lc.clone(),
            _ => entry.address.as_deref().map(lowercase),
        };
        Row {
            key: old.map_or_else(|| id.to_string().into(), |o| o.key.clone()),
            id,
            entry: Rc::new(entry),
            name_lc,
            addr_lc,
            server: key,
        }
    }

    fn id(&self) -> u64 {
        self.id
    }
}

impl EntryItem for Row {
    fn entry(&self) -> &ServerEntry {
        &self.entry
    }
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

/// The Join link of a listed server: `template` (the bridge's, from the
/// page's `<meta name="lobby-join-url">`) filled by the protocol's rule
/// with its address and port; `None` without a template or an address
/// (hidden), and for an address the rule refuses.
pub fn join_link(template: Option<&JoinTemplate>, e: &ServerEntry) -> Option<String> {
    template?.fill(e.address.as_deref()?, e.port?).ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use protocol::{Players, Stats};

    use super::*;
    use crate::list::{summarize, summary_text, visible, Summary};

    pub(crate) fn entry(name: &str, cur: u32, max: u8, open: bool, mode: u64) -> ServerEntry {
        ServerEntry {
            registrant: None,
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

    /// Rows numbered 1, 2, … in list order.
    pub(crate) fn rows(entries: Vec<ServerEntry>) -> Vec<Row> {
        (1..)
            .zip(entries)
            .map(|(id, entry)| Row::from_keyed(keyed(id, entry), None))
            .collect()
    }

    pub(crate) fn keyed(id: u64, entry: ServerEntry) -> Keyed {
        Keyed {
            id,
            key: None,
            entry,
        }
    }

    fn sample() -> Vec<Row> {
        rows(vec![
            entry("bravo", 2, 4, true, 1),
            entry("Alpha", 4, 4, false, 2),
            entry("轰炸机人", 22, 4, false, 2),
            entry("Server von Bösewicht", 0, 3, true, 1),
            entry("charlie", 1, 2, true, 2),
        ])
    }

    fn names(rows: &[Row], q: &ListQuery) -> Vec<String> {
        visible(rows, q)
            .into_iter()
            .map(|i| rows[i].entry.name.clone())
            .collect()
    }

    #[test]
    fn join_links_need_a_template_and_an_address() {
        let template = JoinTemplate::parse("bomber://{address}:{port}").unwrap();
        let mut e = entry("Alpha", 1, 4, true, 1);
        e.address = Some("2001:db8::7".into());
        assert_eq!(
            join_link(Some(&template), &e).as_deref(),
            Some("bomber://[2001:db8::7]:20000")
        );
        assert_eq!(join_link(None, &e), None);
        let hidden = ServerEntry {
            address: None,
            port: None,
            ..e.clone()
        };
        assert_eq!(join_link(Some(&template), &hidden), None);
        let bad = ServerEntry {
            address: Some("a/b".into()),
            ..e
        };
        assert_eq!(join_link(Some(&template), &bad), None);
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
    fn a_changed_entry_keeps_its_key_and_unchanged_texts() {
        let first = Row::from_keyed(keyed(7, entry("Alpha", 1, 4, true, 1)), None);
        assert_eq!((&*first.key, &*first.name_lc), ("7", "alpha"));
        let mut e = (*first.entry).clone();
        e.stats.players.current = 3;
        let next = Row::from_keyed(keyed(7, e.clone()), Some(&first));
        assert!(Rc::ptr_eq(&next.key, &first.key));
        assert!(Rc::ptr_eq(&next.name_lc, &first.name_lc));
        e.name = "Beta".into();
        let renamed = Row::from_keyed(keyed(7, e), Some(&next));
        assert_eq!(&*renamed.name_lc, "beta");
        assert_eq!(renamed.addr_lc, next.addr_lc);
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
        let rows2 = super::tests::rows(renamed);
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
