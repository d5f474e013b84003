//! The lobby's list as the page holds it: one store. The bridge numbers its
//! entries (`docs/protocol.md` §3); the page keeps them in a
//! [`ClientList`] of [`Row`]s, built from a snapshot and kept current by
//! deltas, so the rows are the list and a delta touches only the rows it
//! names (every other row keeps its props, and Yew re-renders just the
//! changed ones). A whole list without ids (a poll's answer, a bridge
//! without deltas) is numbered here, an entry keeping the id of the same
//! server in the last whole list (the protocol's rule, [`same_server`],
//! which the bridge's numbering follows too), and applied the same way.
//!
//! The page never shows a list it cannot vouch for: a delta that does not
//! apply (a gap, another epoch, an unknown id) changes nothing and says so
//! ([`Applied::Resubscribe`]); the connection then subscribes again from
//! [`LobbyStore::resume`], and the bridge answers with what was missed or
//! a snapshot.

use std::{collections::HashMap, rc::Rc};

use protocol::{
    delta::{same_server, ClientList, Delta, Keyed, Resume, Snapshot},
    ServerEntry,
};

use super::{lowercase, Row};
use crate::{list::incremental::RowDiff, services::connection::ListMessage};

/// What a list message did to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The rows shown changed.
    Changed,
    /// The list was confirmed current; the rows did not change.
    Current,
    /// The message did not apply and changed nothing: subscribe again from
    /// [`LobbyStore::resume`].
    Resubscribe,
}

/// The rows the page shows and what the last update changed in them: the
/// projection of the store that views read.
#[derive(Debug, Clone, Default)]
pub struct Shown {
    list: Rc<ClientList<Row>>,
    /// Ids of the rows new or changed in the last update, ascending.
    changed: Rc<Vec<u64>>,
    /// Bumped with every update of the rows (0: none yet).
    version: u32,
}

impl PartialEq for Shown {
    /// The same version of the same rows: compared without walking them.
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version
            && Rc::ptr_eq(&self.list, &other.list)
            && Rc::ptr_eq(&self.changed, &other.changed)
    }
}

impl Shown {
    /// The rows in list order (= id order).
    pub fn rows(&self) -> &[Row] {
        self.list.items()
    }

    /// The rows, shared: the same `Rc` until they change.
    pub fn list(&self) -> &Rc<ClientList<Row>> {
        &self.list
    }

    pub fn version(&self) -> u32 {
        self.version
    }

    /// Whether the row with `id` is new or changed in the last update
    /// (rows of the first list the page shows are neither).
    pub fn is_changed(&self, id: u64) -> bool {
        self.changed.binary_search(&id).is_ok()
    }
}

/// A whole list numbered on the page.
#[derive(Debug, Clone)]
struct Whole {
    list: Rc<ClientList<Row>>,
    /// The id the next new server gets: above every id given before.
    next_id: u64,
}

/// The lobby's list: the bridge's numbered list and, while whole lists
/// come instead (polling), the last whole list.
#[derive(Debug, Clone, Default)]
pub struct LobbyStore {
    /// The bridge's numbered list, kept current by its deltas. It stays
    /// while whole lists are shown, to subscribe again from.
    feed: Option<Rc<ClientList<Row>>>,
    /// The last whole list, shown instead of the feed until the next
    /// snapshot or delta.
    whole: Option<Whole>,
    shown: Shown,
}

impl PartialEq for LobbyStore {
    fn eq(&self, other: &Self) -> bool {
        self.shown == other.shown && self.resume() == other.resume()
    }
}

impl LobbyStore {
    /// The rows shown.
    pub fn shown(&self) -> &Shown {
        &self.shown
    }

    /// The rows in list order.
    pub fn rows(&self) -> &[Row] {
        self.shown.rows()
    }

    /// Bumped with every update of the rows (0: none yet).
    pub fn version(&self) -> u32 {
        self.shown.version
    }

    /// Where to continue the bridge's list from: its `epoch` and `seq`.
    pub fn resume(&self) -> Option<Resume> {
        self.feed.as_deref().map(ClientList::resume)
    }

    /// Applies one list message, all or nothing.
    pub fn apply(&mut self, message: ListMessage) -> Applied {
        match message {
            ListMessage::Snapshot(snapshot) => self.on_snapshot(snapshot),
            ListMessage::Delta(delta) => self.on_delta(&delta),
            ListMessage::Whole(servers) => self.on_whole(servers),
        }
    }

    /// A snapshot replaces the list, whatever it held.
    fn on_snapshot(&mut self, snapshot: Snapshot) -> Applied {
        let list = Rc::new(ClientList::from_snapshot_as(snapshot));
        self.feed = Some(list.clone());
        self.whole = None;
        self.show(list);
        Applied::Changed
    }

    /// A delta applies to the bridge's list, all or nothing. One the list
    /// already went past (sent before the bridge read a resubscribe, and
    /// then again in its answer) changes nothing and asks for nothing.
    fn on_delta(&mut self, delta: &Delta) -> Applied {
        // Only after a subscribe without a list, whose answer is a
        // snapshot: a delta first means it went missing.
        let Some(feed) = &self.feed else {
            return Applied::Resubscribe;
        };
        if feed.epoch() == delta.epoch && delta.prev < feed.seq() && delta.seq <= feed.seq() {
            return Applied::Current;
        }
        let mut next = (**feed).clone();
        if next.apply(delta).is_err() {
            return Applied::Resubscribe;
        }
        let next = Rc::new(next);
        self.feed = Some(next.clone());
        if self.whole.take().is_some() {
            // The rows showed a whole list: the feed's list replaces it.
            self.show(next);
            Applied::Changed
        } else if delta.upsert.is_empty() && delta.remove.is_empty() {
            // The bridge's confirmation after a resubscribe.
            self.shown.list = next;
            Applied::Current
        } else {
            let changed = delta.upsert.iter().map(|k| k.id).collect();
            self.update(next, changed);
            Applied::Changed
        }
    }

    /// A whole list is numbered like the last whole list (see [`number`])
    /// and shown; the bridge's list stays for the next subscribe, and the
    /// next delta shows it again.
    fn on_whole(&mut self, servers: Vec<ServerEntry>) -> Applied {
        let Some(whole) = &self.whole else {
            // The first whole list: numbered in list order.
            let next_id = servers.len() as u64 + 1;
            let list = Rc::new(ClientList::from_snapshot_as(Snapshot {
                epoch: String::new(),
                seq: 0,
                servers: (1..)
                    .zip(servers)
                    .map(|(id, entry)| Keyed {
                        id,
                        key: None,
                        entry,
                    })
                    .collect(),
            }));
            self.whole = Some(Whole {
                list: list.clone(),
                next_id,
            });
            self.show(list);
            return Applied::Changed;
        };
        let old = &whole.list;
        let mut next_id = whole.next_id;
        let (upsert, remove) = number(old.items(), servers, &mut next_id);
        if upsert.is_empty() && remove.is_empty() {
            return Applied::Current;
        }
        // As for a snapshot: the rows of a list that showed none do not
        // flash.
        let changed = if old.is_empty() {
            Vec::new()
        } else {
            upsert.iter().map(|k| k.id).collect()
        };
        let delta = Delta {
            epoch: String::new(),
            seq: old.seq() + 1,
            prev: old.seq(),
            upsert,
            remove,
        };
        let mut next = (**old).clone();
        // Cannot fail: the ids it keeps are the list's own, the new ones
        // above every id it ever held.
        let _ = next.apply(&delta);
        let next = Rc::new(next);
        self.whole = Some(Whole {
            list: next.clone(),
            next_id,
        });
        self.update(next, changed);
        Applied::Changed
    }

    /// Shows `list` in place of the rows shown, which may be another
    /// numbering: a row whose id was shown before with the same entry does
    /// not flash, and neither does any row of a list that showed none.
    fn show(&mut self, list: Rc<ClientList<Row>>) {
        let old = self.shown.rows();
        let changed = if old.is_empty() {
            Vec::new()
        } else {
            list.items()
                .iter()
                .filter(|r| {
                    old.binary_search_by_key(&r.id, |o| o.id)
                        .map_or(true, |i| old[i].entry != r.entry)
                })
                .map(|r| r.id)
                .collect()
        };
        self.update(list, changed);
    }

    fn update(&mut self, list: Rc<ClientList<Row>>, mut changed: Vec<u64>) {
        changed.sort_unstable();
        self.shown = Shown {
            list,
            changed: Rc::new(changed),
            version: self.shown.version.wrapping_add(1).max(1),
        };
    }
}

/// Rows by lowercased name: the first row with each name, and for each
/// row the next one with its name (`u32::MAX`: none).
type ByName = (HashMap<Rc<str>, u32>, Vec<u32>);

/// Numbers `servers`, a whole list, against `old`, the rows of the last
/// one: each entry takes the id of the first row not taken yet of the
/// same server ([`same_server`]), looked up at its own position first (the
/// usual update) and else among the rows of the same name; the others get
/// new ids from `next_id`. Returns the entries that are new or changed
/// and the ids of the rows no entry took.
fn number(old: &[Row], servers: Vec<ServerEntry>, next_id: &mut u64) -> (Vec<Keyed>, Vec<u64>) {
    let mut taken = vec![false; old.len()];
    // Old rows by lowercased name, made when first needed.
    let mut by_name: Option<ByName> = None;
    let mut upsert = Vec::new();
    for (at, entry) in servers.into_iter().enumerate() {
        let same = |i: usize| !taken[i] && same_server(&old[i].entry, &entry);
        let found = if at < old.len() && same(at) {
            Some(at)
        } else {
            let (first, next) = by_name.get_or_insert_with(|| {
                let mut first = HashMap::with_capacity(old.len());
                let mut next = vec![u32::MAX; old.len()];
                for (i, row) in old.iter().enumerate().rev() {
                    if let Some(after) = first.insert(row.name_lc.clone(), i as u32) {
                        next[i] = after;
                    }
                }
                (first, next)
            });
            let mut i = first.get(&*lowercase(&entry.name)).copied();
            while let Some(at) = i.filter(|&at| at != u32::MAX).map(|at| at as usize) {
                if same(at) {
                    break;
                }
                i = Some(next[at]);
            }
            i.filter(|&at| at != u32::MAX).map(|at| at as usize)
        };
        match found {
            Some(i) => {
                taken[i] = true;
                if *old[i].entry != entry {
                    upsert.push(Keyed {
                        id: old[i].id,
                        key: None,
                        entry,
                    });
                }
            }
            None => {
                upsert.push(Keyed {
                    id: *next_id,
                    key: None,
                    entry,
                });
                *next_id += 1;
            }
        }
    }
    let remove = old
        .iter()
        .zip(&taken)
        .filter(|(_, &taken)| !taken)
        .map(|(row, _)| row.id)
        .collect();
    (upsert, remove)
}

/// What changed from `old` to `new`, two lists of rows in id order (`new`
/// made from `old` by one update): a row whose entry is the very same one
/// is kept, any other is re-placed.
pub fn diff(old: &[Row], new: &[Row]) -> RowDiff {
    let mut d = RowDiff {
        new_of_old: Vec::with_capacity(old.len()),
        ..RowDiff::default()
    };
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) if a.id == b.id => {
                if Rc::ptr_eq(&a.entry, &b.entry) {
                    d.new_of_old.push(Some(j));
                } else {
                    d.new_of_old.push(None);
                    d.gone.push(i);
                    d.touched.push(j);
                }
                i += 1;
                j += 1;
            }
            (Some(a), b) if b.is_none_or(|b| a.id < b.id) => {
                d.new_of_old.push(None);
                d.gone.push(i);
                i += 1;
            }
            _ => {
                d.touched.push(j);
                j += 1;
            }
        }
    }
    d
}

#[cfg(test)]
pub(crate) mod tests {
    use protocol::delta::Keyed;

    use super::*;
    use crate::listing::tests::entry;

    pub(crate) fn keyed(id: u64, name: &str, current: u32) -> Keyed {
        Keyed {
            id,
            key: None,
            entry: entry(name, current, 4, true, 1),
        }
    }

    pub(crate) fn snapshot(seq: u64, servers: Vec<Keyed>) -> ListMessage {
        ListMessage::Snapshot(Snapshot {
            epoch: "e".into(),
            seq,
            servers,
        })
    }

    pub(crate) fn delta(prev: u64, upsert: Vec<Keyed>, remove: Vec<u64>) -> ListMessage {
        ListMessage::Delta(Delta {
            epoch: "e".into(),
            seq: prev + 1,
            prev,
            upsert,
            remove,
        })
    }

    fn entries(store: &LobbyStore) -> Vec<(u64, ServerEntry)> {
        store
            .rows()
            .iter()
            .map(|r| (r.id, (*r.entry).clone()))
            .collect()
    }

    fn changed(store: &LobbyStore) -> Vec<u64> {
        let shown = store.shown();
        shown
            .rows()
            .iter()
            .map(|r| r.id)
            .filter(|&id| shown.is_changed(id))
            .collect()
    }

    #[test]
    fn a_snapshot_is_keyed_by_id() {
        let mut store = LobbyStore::default();
        assert_eq!(
            store.apply(snapshot(1, vec![keyed(4, "B", 1), keyed(2, "a", 0)])),
            Applied::Changed
        );
        let keys: Vec<&str> = store.rows().iter().map(|r| &*r.key).collect();
        assert_eq!(keys, ["2", "4"], "in id order whatever the wire's order");
        assert_eq!(&*store.rows()[1].name_lc, "b");
        assert!(changed(&store).is_empty(), "the first list does not flash");
        assert_eq!(store.resume().map(|r| r.since), Some(1));
        // A snapshot of the same bridge: only the changed server flashes.
        store.apply(snapshot(2, vec![keyed(2, "a", 0), keyed(4, "B", 2)]));
        assert_eq!(changed(&store), [4]);
        assert_eq!(store.version(), 2);
    }

    /// Three rows (ids 1, 2, 3), then a delta that removes 1, changes 2
    /// and adds 5.
    fn three_then_delta() -> (LobbyStore, LobbyStore) {
        let mut store = LobbyStore::default();
        store.apply(snapshot(
            1,
            vec![keyed(1, "a", 0), keyed(2, "b", 0), keyed(3, "c", 0)],
        ));
        let before = store.clone();
        assert_eq!(
            store.apply(delta(1, vec![keyed(2, "b", 3), keyed(5, "e", 1)], vec![1])),
            Applied::Changed
        );
        (before, store)
    }

    #[test]
    fn a_delta_touches_only_the_rows_it_names() {
        let (before, store) = three_then_delta();
        let (rows, next) = (before.rows(), store.rows());
        assert_eq!(
            entries(&store),
            [
                (2, entry("b", 3, 4, true, 1)),
                (3, entry("c", 0, 4, true, 1)),
                (5, entry("e", 1, 4, true, 1))
            ]
        );
        // The untouched row is the very same row (equal props: no render).
        assert!(Rc::ptr_eq(&next[1].entry, &rows[2].entry));
        assert_eq!(next[1], rows[2]);
        assert_eq!(changed(&store), [2, 5]);
        // The key and the lowercased texts of a changed row stay.
        assert!(Rc::ptr_eq(&next[0].key, &rows[1].key));
        assert!(Rc::ptr_eq(&next[0].name_lc, &rows[1].name_lc));
        // A row that is not there yet joins in id order.
        let mut late = store.clone();
        late.apply(delta(2, vec![keyed(6, "d", 0)], vec![]));
        let ids: Vec<u64> = late.rows().iter().map(|r| r.id).collect();
        assert_eq!(ids, [2, 3, 5, 6]);
        assert_eq!(late.resume().map(|r| r.since), Some(3));
    }

    #[test]
    fn the_diff_names_what_a_delta_touched() {
        let (before, store) = three_then_delta();
        let d = diff(before.rows(), store.rows());
        assert_eq!(d.new_of_old, [None, None, Some(1)]);
        assert_eq!((d.gone, d.touched), (vec![0, 1], vec![0, 2]));
        assert_eq!(
            diff(store.rows(), store.rows()).new_of_old,
            [Some(0), Some(1), Some(2)]
        );
    }

    #[test]
    fn a_delta_that_does_not_apply_changes_nothing() {
        let mut store = LobbyStore::default();
        // Before any snapshot.
        assert_eq!(store.apply(delta(3, vec![], vec![])), Applied::Resubscribe);
        assert_eq!(store.resume(), None);
        store.apply(snapshot(5, vec![keyed(1, "a", 0)]));
        let before = store.clone();
        // A delta the list already went past is old news, not a gap.
        assert_eq!(
            store.apply(delta(3, vec![keyed(7, "x", 0)], vec![])),
            Applied::Current
        );
        assert_eq!(store, before);
        let bad = [
            (delta(6, vec![], vec![]), "gap"),
            (delta(5, vec![], vec![9]), "unknown id"),
            (
                ListMessage::Delta(Delta {
                    epoch: "other".into(),
                    seq: 6,
                    prev: 5,
                    upsert: vec![],
                    remove: vec![],
                }),
                "epoch",
            ),
        ];
        for (d, what) in bad {
            assert_eq!(store.apply(d), Applied::Resubscribe, "{what}");
            assert_eq!(store, before, "{what} changed the list");
            assert_eq!(entries(&store), entries(&before), "{what}");
        }
        // The bridge's confirmation after a resubscribe: prev = seq.
        let confirm = ListMessage::Delta(Delta {
            epoch: "e".into(),
            seq: 6,
            prev: 5,
            upsert: vec![],
            remove: vec![],
        });
        assert_eq!(store.apply(confirm), Applied::Current);
        assert_eq!(store.resume().map(|r| r.since), Some(6));
        assert_eq!(store.version(), before.version());
    }

    #[test]
    fn whole_lists_keep_ids_by_the_bridges_rule_and_changes_flash() {
        let mut store = LobbyStore::default();
        let whole = |v: Vec<ServerEntry>| ListMessage::Whole(v);
        let first = vec![
            entry("bravo", 2, 4, true, 1),
            entry("Alpha", 4, 4, false, 2),
        ];
        assert_eq!(store.apply(whole(first.clone())), Applied::Changed);
        assert!(changed(&store).is_empty());
        let before = store.rows().to_vec();
        // The same list: nothing to render.
        assert_eq!(store.apply(whole(first.clone())), Applied::Current);
        // A change and an arrival: ids stay, only they flash.
        let mut next = first.clone();
        next[0].stats.players.current = 3;
        next.push(entry("delta", 0, 2, true, 1));
        assert_eq!(store.apply(whole(next)), Applied::Changed);
        let rows = store.rows();
        assert_eq!(rows[0].key, before[0].key);
        assert!(Rc::ptr_eq(&rows[1].key, &before[1].key));
        assert_eq!(rows[1], before[1]);
        assert_eq!(changed(&store), [rows[0].id, rows[2].id]);
        // Servers registered twice alike (a bridge that hides addresses)
        // get keys of their own.
        let mut hidden = entry("same", 1, 4, true, 1);
        hidden.address = None;
        hidden.port = None;
        let mut dup = LobbyStore::default();
        dup.apply(whole(vec![hidden.clone(), hidden.clone()]));
        let keys: Vec<Rc<str>> = dup.rows().iter().map(|r| r.key.clone()).collect();
        assert_ne!(keys[0], keys[1]);
        let mut more = hidden.clone();
        more.stats.players.current = 2;
        dup.apply(whole(vec![hidden.clone(), more, hidden]));
        assert_eq!(dup.rows()[0].key, keys[0]);
        assert_eq!(dup.rows()[1].key, keys[1]);
        assert_eq!(changed(&dup), [dup.rows()[1].id, dup.rows()[2].id]);
    }

    #[test]
    fn a_whole_list_shows_until_the_next_delta_shows_the_feed_again() {
        let mut store = LobbyStore::default();
        store.apply(snapshot(1, vec![keyed(1, "a", 0)]));
        let whole = vec![keyed(1, "a", 2).entry];
        assert_eq!(store.apply(ListMessage::Whole(whole)), Applied::Changed);
        assert_eq!(entries(&store), [(1, keyed(1, "a", 2).entry)]);
        // The bridge's list is still the one to resume from.
        assert_eq!(store.resume().map(|r| r.since), Some(1));
        assert_eq!(
            store.apply(delta(1, vec![keyed(2, "b", 0)], vec![])),
            Applied::Changed
        );
        assert_eq!(
            entries(&store),
            [(1, keyed(1, "a", 0).entry), (2, keyed(2, "b", 0).entry)]
        );
        // Back on the feed: the next delta touches only what it names.
        let before = store.rows().to_vec();
        store.apply(delta(2, vec![keyed(1, "a", 1)], vec![]));
        assert_eq!(changed(&store), [1]);
        assert_eq!(store.rows()[1], before[1]);
        // An empty whole list empties the rows.
        store.apply(ListMessage::Whole(Vec::new()));
        assert!(store.rows().is_empty());
    }
}
