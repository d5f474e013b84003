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

use std::{
    cell::{Ref, RefCell},
    collections::HashMap,
    rc::Rc,
};

use protocol::{
    delta::{same_server, Changes, ClientList, Delta, Keyed, Resume, Snapshot},
    ServerEntry,
};

use super::{
    lobby::{lowercase, Row},
    resummarize, summarize, Summary,
};
use crate::services::connection::ListMessage;

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

/// How the rows shown came from the rows shown before, so the views redo
/// only what changed.
#[derive(Debug, Default)]
pub enum Update {
    /// Any row may have changed (the first list, a snapshot, a switch
    /// between the bridge's list and a whole list): views start over.
    #[default]
    All,
    /// One delta (or a whole list numbered as one) applied to the rows of
    /// version `from`, with what it took out and put in.
    Rows { from: u32, changes: Changes<Row> },
}

/// The rows the page shows and what the last update changed in them: the
/// projection of the store that views read. The rows are the store's own,
/// changed in place (no update copies the list); `version` says which
/// update a `ListView` was made for.
#[derive(Debug, Clone, Default)]
pub struct ListView {
    lists: Rc<RefCell<Lists>>,
    /// Ids of the rows new or changed in the last update (those that
    /// flash), ascending.
    changed: Rc<Vec<u64>>,
    update: Rc<Update>,
    /// Bumped with every update of the rows (0: none yet).
    version: u32,
    /// The summary line's counts of this version's rows.
    summary: Summary,
}

impl PartialEq for ListView {
    /// The same version of the same rows: compared without walking them.
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version
            && Rc::ptr_eq(&self.lists, &other.lists)
            && Rc::ptr_eq(&self.update, &other.update)
    }
}

impl ListView {
    /// The rows in list order (= id order). Borrowed from the store: hold
    /// it only while drawing, never across a dispatch.
    pub fn rows(&self) -> Ref<'_, [Row]> {
        Ref::map(self.lists.borrow(), Lists::rows)
    }

    pub fn version(&self) -> u32 {
        self.version
    }

    /// The summary line's counts of these rows: kept with the list, so an
    /// update counts again only the rows it took out and put in.
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// How these rows came from the rows of the version before.
    pub fn update(&self) -> &Update {
        &self.update
    }

    /// Ids of the rows new or changed in the last update, ascending (rows
    /// of the first list the page shows are neither).
    pub fn changed(&self) -> &[u64] {
        &self.changed
    }

    /// Whether the rows are still those of this version: the rows change
    /// in place, so a reader that runs later (an effect after a render)
    /// may find a newer update applied, whose positions differ.
    pub fn is_current(&self) -> bool {
        self.lists.borrow().version == self.version
    }

    /// Whether the row with `id` is new or changed in the last update.
    pub fn is_changed(&self, id: u64) -> bool {
        self.changed.binary_search(&id).is_ok()
    }
}

/// A whole list numbered on the page.
#[derive(Debug)]
struct Whole {
    list: ClientList<Row>,
    /// The id the next new server gets: above every id given before.
    next_id: u64,
}

/// The lists themselves: the bridge's numbered list and, while whole
/// lists come instead (polling), the last whole list.
#[derive(Debug, Default)]
struct Lists {
    /// The bridge's numbered list, kept current by its deltas. It stays
    /// while whole lists are shown, to subscribe again from.
    feed: Option<ClientList<Row>>,
    /// The last whole list, shown instead of the feed until the next
    /// snapshot or delta.
    whole: Option<Whole>,
    /// The version of the rows these lists hold now.
    version: u32,
    /// The summary line's counts of those rows.
    summary: Summary,
}

/// What a message did to the lists.
enum Outcome {
    Resubscribe,
    Current,
    /// Any row shown may have changed; the ids that flash.
    All(Vec<u64>),
    /// The rows shown changed by these changes; the ids that flash.
    Rows(Changes<Row>, Vec<u64>),
}

/// The lobby's list: the one store of its rows and of where it stands in
/// the bridge's numbering. Clones are handles to the same store (the page
/// state's clones, the connection's events, which apply to it, and the
/// connection, which asks it where to subscribe from); an update changes
/// its rows in place and bumps the version, the store's own, so an update
/// through any handle follows the last.
#[derive(Debug, Clone, Default)]
pub struct LobbyStore {
    shown: ListView,
}

impl PartialEq for LobbyStore {
    fn eq(&self, other: &Self) -> bool {
        self.shown == other.shown
    }
}

impl LobbyStore {
    /// The rows shown.
    pub fn shown(&self) -> &ListView {
        &self.shown
    }

    /// The rows in list order (see [`Shown::rows`]).
    pub fn rows(&self) -> Ref<'_, [Row]> {
        self.shown.rows()
    }

    /// Bumped with every update of the rows (0: none yet).
    pub fn version(&self) -> u32 {
        self.shown.version
    }

    /// Where to continue the bridge's list from: its `epoch` and `seq`.
    /// The only record of it: the connection asks here each time it
    /// subscribes.
    pub fn resume(&self) -> Option<Resume> {
        self.shown
            .lists
            .borrow()
            .feed
            .as_ref()
            .map(ClientList::resume)
    }

    /// Applies one list message, all or nothing.
    pub fn apply(&mut self, message: ListMessage) -> Applied {
        let (outcome, from) = {
            let mut lists = self.shown.lists.borrow_mut();
            let outcome = match message {
                ListMessage::Snapshot(snapshot) => lists.on_snapshot(snapshot),
                ListMessage::Delta(delta) => lists.on_delta(&delta),
                ListMessage::Whole(servers) => lists.on_whole(servers),
            };
            (outcome, lists.version)
        };
        match outcome {
            Outcome::Resubscribe => Applied::Resubscribe,
            Outcome::Current => Applied::Current,
            Outcome::All(changed) => self.show(Update::All, from, changed),
            Outcome::Rows(changes, changed) => {
                self.show(Update::Rows { from, changes }, from, changed)
            }
        }
    }

    /// A new version of the rows, the one after `from`, made by `update`;
    /// `changed` flash.
    fn show(&mut self, update: Update, from: u32, mut changed: Vec<u64>) -> Applied {
        changed.sort_unstable();
        let version = from.wrapping_add(1).max(1);
        let summary = {
            let mut lists = self.shown.lists.borrow_mut();
            let rows = lists.rows();
            let summary = match &update {
                Update::Rows { changes, .. } => resummarize(
                    lists.summary,
                    changes.out.iter().map(|(_, r)| r),
                    changes.put.iter().filter_map(|&j| rows.get(j)),
                ),
                Update::All => summarize(rows),
            };
            lists.version = version;
            lists.summary = summary;
            summary
        };
        self.shown = ListView {
            lists: self.shown.lists.clone(),
            changed: Rc::new(changed),
            update: Rc::new(update),
            version,
            summary,
        };
        Applied::Changed
    }
}

impl Lists {
    /// The rows shown: the last whole list while there is one, else the
    /// bridge's list.
    fn rows(&self) -> &[Row] {
        match (&self.whole, &self.feed) {
            (Some(w), _) => w.list.items(),
            (None, Some(feed)) => feed.items(),
            (None, None) => &[],
        }
    }

    /// A snapshot replaces the list, whatever it held.
    fn on_snapshot(&mut self, snapshot: Snapshot) -> Outcome {
        let list = ClientList::from_snapshot_as(snapshot);
        let changed = changed_ids(self.rows(), list.items());
        self.feed = Some(list);
        self.whole = None;
        Outcome::All(changed)
    }

    /// A delta applies to the bridge's list, all or nothing. One the list
    /// already went past (sent before the bridge read a resubscribe, and
    /// then again in its answer) changes nothing and asks for nothing.
    fn on_delta(&mut self, delta: &Delta) -> Outcome {
        // Only after a subscribe without a list, whose answer is a
        // snapshot: a delta first means it went missing.
        let Some(feed) = &mut self.feed else {
            return Outcome::Resubscribe;
        };
        if feed.epoch() == delta.epoch && delta.prev < feed.seq() && delta.seq <= feed.seq() {
            return Outcome::Current;
        }
        let Ok(changes) = feed.apply_changes(delta) else {
            return Outcome::Resubscribe;
        };
        if let Some(whole) = self.whole.take() {
            // The rows showed a whole list: the feed's list replaces it.
            let changed = changed_ids(whole.list.items(), feed.items());
            Outcome::All(changed)
        } else if changes.is_empty() {
            // The bridge's confirmation after a resubscribe.
            Outcome::Current
        } else {
            let changed = changes.put.iter().map(|&j| feed.items()[j].id).collect();
            Outcome::Rows(changes, changed)
        }
    }

    /// A whole list is numbered like the last whole list (see [`number`])
    /// and shown; the bridge's list stays for the next subscribe, and the
    /// next delta shows it again.
    fn on_whole(&mut self, servers: Vec<ServerEntry>) -> Outcome {
        let Some(whole) = &mut self.whole else {
            // The first whole list: numbered in list order.
            let next_id = servers.len() as u64 + 1;
            let list = ClientList::from_snapshot_as(Snapshot {
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
            });
            let changed = changed_ids(self.rows(), list.items());
            self.whole = Some(Whole { list, next_id });
            return Outcome::All(changed);
        };
        let list = &mut whole.list;
        let (upsert, remove) = number(list.items(), servers, &mut whole.next_id);
        if upsert.is_empty() && remove.is_empty() {
            return Outcome::Current;
        }
        // As for a snapshot: the rows of a list that showed none do not
        // flash.
        let flash = !list.is_empty();
        // Cannot fail: the ids it keeps are the list's own, the new ones
        // above every id it ever held (and a failure changes nothing).
        let Some(changes) = apply_next(list, upsert, remove) else {
            return Outcome::Current;
        };
        let changed = if flash {
            changes.put.iter().map(|&j| list.items()[j].id).collect()
        } else {
            Vec::new()
        };
        Outcome::Rows(changes, changed)
    }
}

/// Applies to `list`, numbered on the page (no epoch), its next delta:
/// `upsert` and `remove`. What it changed, or `None` (and nothing
/// changed) when an id it removes is not in the list.
pub(crate) fn apply_next(
    list: &mut ClientList<Row>,
    upsert: Vec<Keyed>,
    remove: Vec<u64>,
) -> Option<Changes<Row>> {
    let delta = Delta {
        epoch: String::new(),
        seq: list.seq() + 1,
        prev: list.seq(),
        upsert,
        remove,
    };
    list.apply_changes(&delta).ok()
}

/// The ids of the rows of `new` to flash when it replaces `old`, which
/// may be another numbering: a row whose id was shown before with the
/// same entry does not flash, and neither does any row of a list that
/// showed none.
fn changed_ids(old: &[Row], new: &[Row]) -> Vec<u64> {
    if old.is_empty() {
        return Vec::new();
    }
    new.iter()
        .filter(|r| {
            old.binary_search_by_key(&r.id, |o| o.id)
                .map_or(true, |i| old[i].entry != r.entry)
        })
        .map(|r| r.id)
        .collect()
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

#[cfg(test)]
pub(crate) mod tests {
    use protocol::delta::Keyed;

    use super::*;
    use crate::list::lobby::tests::entry;

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
        let keys: Vec<Rc<str>> = store.rows().iter().map(|r| r.key.clone()).collect();
        assert_eq!(
            keys,
            ["2".into(), "4".into()],
            "in id order whatever the wire's order"
        );
        assert_eq!(&*store.rows()[1].name_lc, "b");
        assert!(changed(&store).is_empty(), "the first list does not flash");
        assert_eq!(store.resume().map(|r| r.since), Some(1));
        // A snapshot of the same bridge: only the changed server flashes.
        store.apply(snapshot(2, vec![keyed(2, "a", 0), keyed(4, "B", 2)]));
        assert_eq!(changed(&store), [4]);
        assert_eq!(store.version(), 2);
    }

    #[test]
    fn a_reader_that_runs_later_knows_its_rows_moved_on() {
        let mut store = LobbyStore::default();
        store.apply(snapshot(1, vec![keyed(1, "a", 0)]));
        // What a render kept (an effect's copy of the store).
        let seen = store.clone();
        assert!(seen.shown().is_current());
        store.apply(delta(1, vec![keyed(2, "b", 0)], vec![]));
        assert!(!seen.shown().is_current(), "the rows are version 2's now");
        assert!(store.shown().is_current());
        // A message that changes nothing leaves the version as it is.
        store.apply(delta(1, vec![keyed(2, "b", 0)], vec![]));
        assert!(store.shown().is_current());
    }

    #[test]
    fn the_summary_follows_every_update_through_any_handle() {
        let (_, mut store) = three_then_delta();
        assert_eq!(store.shown().summary(), summarize(&store.rows()));
        assert_eq!(store.shown().summary().players, 4);
        // A handle kept from before (a render's copy) applies after the
        // last update, not after its own.
        let mut kept = store.clone();
        store.apply(delta(2, vec![keyed(3, "c", 2)], vec![5]));
        assert_eq!(
            kept.apply(delta(3, vec![keyed(6, "f", 1)], vec![])),
            Applied::Changed
        );
        assert_eq!(kept.version(), 4);
        let shown = kept.shown();
        assert_eq!(shown.summary(), summarize(&shown.rows()));
        assert_eq!((shown.summary().servers, shown.summary().players), (3, 6));
        // A whole list starts the count over.
        kept.apply(ListMessage::Whole(vec![entry("w", 2, 4, true, 1)]));
        assert_eq!(kept.shown().summary(), summarize(&kept.rows()));
    }

    /// Three rows (ids 1, 2, 3), then a delta that removes 1, changes 2
    /// and adds 5.
    fn three_then_delta() -> (Vec<Row>, LobbyStore) {
        let mut store = LobbyStore::default();
        store.apply(snapshot(
            1,
            vec![keyed(1, "a", 0), keyed(2, "b", 0), keyed(3, "c", 0)],
        ));
        let before = store.rows().to_vec();
        assert_eq!(
            store.apply(delta(1, vec![keyed(2, "b", 3), keyed(5, "e", 1)], vec![1])),
            Applied::Changed
        );
        (before, store)
    }

    #[test]
    fn a_delta_touches_only_the_rows_it_names() {
        let (rows, store) = three_then_delta();
        let next = store.rows();
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
        drop(next);
        // A row that is not there yet joins in id order.
        let mut late = store.clone();
        late.apply(delta(2, vec![keyed(6, "d", 0)], vec![]));
        let ids: Vec<u64> = late.rows().iter().map(|r| r.id).collect();
        assert_eq!(ids, [2, 3, 5, 6]);
        assert_eq!(late.resume().map(|r| r.since), Some(3));
    }

    #[test]
    fn an_update_says_what_it_took_out_and_put_in() {
        let (before, store) = three_then_delta();
        let shown = store.shown();
        let Update::Rows { from, changes } = shown.update() else {
            panic!("a delta is not a whole new list");
        };
        assert_eq!(*from, 1, "made from the snapshot's rows");
        // Out: row 1 (removed) and row 2 (changed), as they were.
        assert_eq!(
            changes.out,
            [(0, before[0].clone()), (1, before[1].clone())]
        );
        // In: row 2 where it stands, row 5 at the end.
        assert_eq!(changes.put, [0, 2]);
        assert_eq!(changes.moved(2), Some(1), "row 3 kept, one place up");
        assert_eq!(shown.changed(), [2, 5]);
        // The rows were changed in place: the store holds one list, and
        // every handle to it sees the new version.
        let handle = store.clone();
        assert_eq!(handle.rows().len(), 3);
        assert!(matches!(
            LobbyStore::default().shown().update(),
            Update::All
        ));
    }

    #[test]
    fn a_delta_that_does_not_apply_changes_nothing() {
        let mut store = LobbyStore::default();
        // Before any snapshot.
        assert_eq!(store.apply(delta(3, vec![], vec![])), Applied::Resubscribe);
        assert_eq!(store.resume(), None);
        store.apply(snapshot(5, vec![keyed(1, "a", 0)]));
        let before = store.clone();
        let (rows, resume) = (entries(&store), store.resume());
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
            assert_eq!(entries(&store), rows, "{what}");
            assert_eq!(store.resume(), resume, "{what}");
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
        let rows = store.rows().to_vec();
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
