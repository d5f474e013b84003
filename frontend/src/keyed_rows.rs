//! Rows of a list the bridge numbers (`docs/protocol.md` §3): keyed by
//! the bridge's id and kept in id order (the master's order), so a delta
//! touches only the rows it names and every other row keeps its props, and
//! Yew re-renders just the changed ones.

use std::rc::Rc;

use protocol::delta::Keyed;

use crate::{
    list::incremental::RowDiff,
    listing::{lowercase, Row},
};

fn row(keyed: Keyed, changed_in: u32) -> Row {
    let entry = Rc::new(keyed.entry);
    Row {
        key: keyed.id.to_string().into(),
        id: keyed.id,
        name_lc: lowercase(&entry.name),
        addr_lc: entry.address.as_deref().map(lowercase),
        entry,
        changed_in,
    }
}

/// Rows for a whole keyed list, in id order. A row whose id was shown
/// before with the same entry does not flash (a snapshot from another
/// bridge has other ids, so there every row flashes once).
pub fn rows_from_snapshot(servers: Vec<Keyed>, previous: &[Row], version: u32) -> Vec<Row> {
    servers
        .into_iter()
        .map(|k| {
            let prev = previous
                .binary_search_by_key(&k.id, |r| r.id)
                .ok()
                .map(|i| &previous[i]);
            let changed_in = match prev {
                Some(p) if *p.entry == k.entry => p.changed_in,
                _ if previous.is_empty() => 0,
                _ => version,
            };
            row(k, changed_in)
        })
        .collect()
}

/// The rows after a delta that applied to the list they show: `remove`d
/// ids leave, `upsert`s replace the row with their id or join in id order;
/// every other row is the same row as before.
pub fn apply_delta(previous: &[Row], upsert: Vec<Keyed>, remove: &[u64], version: u32) -> Vec<Row> {
    let mut rows = previous.to_vec();
    if !remove.is_empty() {
        // Marked by binary search, dropped in one pass.
        let mut gone = vec![false; rows.len()];
        for id in remove {
            if let Ok(i) = rows.binary_search_by_key(id, |r| r.id) {
                gone[i] = true;
            }
        }
        let mut marks = gone.into_iter();
        rows.retain(|_| !marks.next().unwrap_or(false));
    }
    for k in upsert {
        match rows.binary_search_by_key(&k.id, |r| r.id) {
            Ok(i) => {
                let old = &rows[i];
                let entry = Rc::new(k.entry);
                // The lowercased texts stay when the texts do.
                let name_lc = if old.entry.name == entry.name {
                    old.name_lc.clone()
                } else {
                    lowercase(&entry.name)
                };
                let addr_lc = if old.entry.address == entry.address {
                    old.addr_lc.clone()
                } else {
                    entry.address.as_deref().map(lowercase)
                };
                rows[i] = Row {
                    key: old.key.clone(),
                    id: old.id,
                    entry,
                    name_lc,
                    addr_lc,
                    changed_in: version,
                };
            }
            Err(i) => rows.insert(i, row(k, version)),
        }
    }
    rows
}

/// What changed from `old` to `new`, two lists of keyed rows in id order
/// (`new` made from `old` by [`apply_delta`] or a snapshot): a row whose
/// entry is the very same one is kept, any other is re-placed. `None`
/// when either list is not keyed (a whole list has no ids).
pub fn diff(old: &[Row], new: &[Row]) -> Option<RowDiff> {
    let keyed = |rows: &[Row]| {
        rows.first().is_none_or(|r| r.id != 0) && rows.windows(2).all(|w| w[0].id < w[1].id)
    };
    if !keyed(old) || !keyed(new) {
        return None;
    }
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
    Some(d)
}

#[cfg(test)]
mod tests {
    use protocol::ServerEntry;

    use super::*;
    use crate::listing::tests::entry;

    fn keyed(id: u64, name: &str, current: u32) -> Keyed {
        Keyed {
            key: None,
            id,
            entry: entry(name, current, 4, true, 1),
        }
    }

    fn entries(rows: &[Row]) -> Vec<(u64, ServerEntry)> {
        rows.iter().map(|r| (r.id, (*r.entry).clone())).collect()
    }

    #[test]
    fn a_snapshot_is_keyed_by_id() {
        let rows = rows_from_snapshot(vec![keyed(2, "a", 0), keyed(4, "B", 1)], &[], 1);
        assert_eq!(rows.iter().map(|r| &*r.key).collect::<Vec<_>>(), ["2", "4"]);
        assert!(rows.iter().all(|r| r.changed_in == 0));
        assert_eq!(&*rows[1].name_lc, "b");
        // A snapshot of the same bridge: only the changed server flashes.
        let again = rows_from_snapshot(vec![keyed(2, "a", 0), keyed(4, "B", 2)], &rows, 2);
        assert_eq!(
            again.iter().map(|r| r.changed_in).collect::<Vec<_>>(),
            [0, 2]
        );
    }

    /// Three rows (ids 1, 2, 3), then a delta that removes 1, changes 2
    /// and adds 5.
    fn three_then_delta() -> (Vec<Row>, Vec<Row>) {
        let rows = rows_from_snapshot(
            vec![keyed(1, "a", 0), keyed(2, "b", 0), keyed(3, "c", 0)],
            &[],
            1,
        );
        let next = apply_delta(&rows, vec![keyed(2, "b", 3), keyed(5, "e", 1)], &[1], 2);
        (rows, next)
    }

    #[test]
    fn a_delta_touches_only_the_rows_it_names() {
        let (rows, next) = three_then_delta();
        assert_eq!(
            entries(&next),
            [
                (2, entry("b", 3, 4, true, 1)),
                (3, entry("c", 0, 4, true, 1)),
                (5, entry("e", 1, 4, true, 1))
            ]
        );
        // The untouched row is the very same row (equal props: no render).
        assert!(Rc::ptr_eq(&next[1].entry, &rows[2].entry));
        assert_eq!(next[1], rows[2]);
        assert_eq!(
            next.iter().map(|r| r.changed_in).collect::<Vec<_>>(),
            [2, 0, 2]
        );
        // The key and the lowercased texts of a changed row stay.
        assert!(Rc::ptr_eq(&next[0].key, &rows[1].key));
        assert!(Rc::ptr_eq(&next[0].name_lc, &rows[1].name_lc));
        // A row that is not there yet joins in id order.
        let late = apply_delta(&next, vec![keyed(4, "d", 0)], &[], 3);
        assert_eq!(late.iter().map(|r| r.id).collect::<Vec<_>>(), [2, 3, 4, 5]);
    }

    #[test]
    fn the_diff_names_what_a_delta_touched() {
        let (rows, next) = three_then_delta();
        let d = diff(&rows, &next).expect("keyed");
        assert_eq!(d.new_of_old, [None, None, Some(1)]);
        assert_eq!((d.gone, d.touched), (vec![0, 1], vec![0, 2]));
        assert_eq!(
            diff(&rows, &rows).expect("keyed").new_of_old,
            [Some(0), Some(1), Some(2)]
        );
        // A whole list has no ids: no diff.
        let whole = crate::listing::build_rows(vec![entry("a", 0, 4, true, 1)], &[], 1);
        assert_eq!(diff(&rows, &whole), None);
        assert_eq!(diff(&whole, &rows), None);
    }
}
