//! Arranging a list again after an update that changed a few rows: the
//! last arrangement keeps its order and only the changed, added and
//! removed rows are re-placed (a binary search each), instead of filtering
//! and sorting every row again. Which rows those are is the list's own
//! answer (`protocol::delta::Changes`, from applying the update), not a
//! comparison of two lists. The result equals a whole arrangement (tested
//! below against it for random deltas).

use std::{cmp::Ordering, rc::Rc};

use protocol::delta::Changes;

use crate::{
    favourites::Marks,
    list::{
        arrange::{place, Place},
        arrange_rows, matches, order, Arranged, ListRow,
    },
    query::ListQuery,
};

/// Puts `j` into `v`, which is sorted by `cmp`.
fn insert_by(v: &mut Vec<usize>, j: usize, cmp: &dyn Fn(usize, usize) -> Ordering) {
    let at = v.partition_point(|&x| cmp(x, j) == Ordering::Less);
    v.insert(at, j);
}

/// The arrangement of `rows` from `prev`, the arrangement under the same
/// query and marks of the rows before `changes` (the list's own answer to
/// what an update took out and put in: nothing is compared to find it).
pub fn rearrange<T: ListRow>(
    prev: &Arranged,
    rows: &[T],
    changes: &Changes<T>,
    q: &ListQuery,
    marks: &Marks,
    source: &str,
) -> Arranged {
    let search_lc = q.search.trim().to_lowercase();
    let place_of = |r: &T| {
        let ok = matches(r, q, &search_lc);
        place(marks, q.favourites_only, || r.mark_key(source), ok)
    };
    let mut out = Arranged {
        filtered_out: prev.filtered_out,
        hidden: prev.hidden,
        ..Arranged::default()
    };
    for (_, old) in &changes.out {
        match place_of(old) {
            Place::Out => out.filtered_out = out.filtered_out.saturating_sub(1),
            Place::Hidden { .. } => out.hidden = out.hidden.saturating_sub(1),
            Place::Favourite { .. } | Place::Rest => {}
        }
    }
    // Kept rows keep their order; their indices move past the removed and
    // added rows (the map is monotone, so sorted lists stay sorted).
    let remap = |v: &[usize]| -> Vec<usize> {
        if changes.out.is_empty() && changes.put.is_empty() {
            return v.to_vec();
        }
        v.iter().filter_map(|&i| changes.moved(i)).collect()
    };
    let pinned = prev.pinned.min(prev.idx.len());
    let mut favs = remap(&prev.idx[..pinned]);
    let mut rest = remap(&prev.idx[pinned..]);
    out.unmatched = remap(&prev.unmatched);
    out.hidden_shown = remap(&prev.hidden_shown);
    let cmp = |a: usize, b: usize| order(&rows[a], &rows[b], q);
    let by_index = |a: usize, b: usize| a.cmp(&b);
    for &j in &changes.put {
        let Some(row) = rows.get(j) else { continue };
        match place_of(row) {
            Place::Favourite { matches, .. } => {
                insert_by(&mut favs, j, &cmp);
                if !matches {
                    insert_by(&mut out.unmatched, j, &by_index);
                }
            }
            Place::Hidden { shown } => {
                out.hidden += 1;
                if shown {
                    insert_by(&mut rest, j, &cmp);
                    insert_by(&mut out.hidden_shown, j, &by_index);
                }
            }
            Place::Out => out.filtered_out += 1,
            Place::Rest => insert_by(&mut rest, j, &cmp),
        }
    }
    // Favourites present, in list order as a whole arrangement lists them
    // (at most `MAX_FAVOURITES`).
    let mut present = favs.clone();
    present.sort_unstable();
    out.present = present
        .into_iter()
        .map(|i| (rows[i].mark_key(source), rows[i].title().to_owned()))
        .collect();
    out.pinned = favs.len();
    out.idx = favs;
    out.idx.extend(rest);
    out
}

/// The last arrangement of a table: which version of the rows it was made
/// for, under which query and marks.
pub struct LastArranged {
    version: u32,
    query: ListQuery,
    marks_version: u32,
    arranged: Rc<Arranged>,
}

/// The arrangement of `rows`, version `version` of a list, under `q` and
/// `marks`. `since` is how these rows came from an earlier version
/// (`from`, by `changes`): when `last` was made for that version under the
/// same query and marks and the changes are few, only the changed rows
/// are re-placed; the same version gives `last` again; anything else
/// arranges every row. `last` becomes this arrangement.
pub fn arrange_after<T: ListRow>(
    last: &mut Option<LastArranged>,
    (rows, version): (&[T], u32),
    since: Option<(u32, &Changes<T>)>,
    q: &ListQuery,
    marks: &Marks,
    source: &str,
) -> Rc<Arranged> {
    // Each re-placed row costs a shift of the order; past this many a
    // whole arrangement is as cheap.
    let most = 32.max(rows.len() / 64);
    let next = last
        .as_ref()
        .filter(|l| l.query == *q && l.marks_version == marks.version)
        .and_then(|l| {
            if l.version == version {
                return Some(l.arranged.clone());
            }
            let (_, changes) = since.filter(|(from, _)| *from == l.version)?;
            let few = changes.out.len() + changes.put.len() <= most;
            few.then(|| Rc::new(rearrange(&l.arranged, rows, changes, q, marks, source)))
        })
        .unwrap_or_else(|| Rc::new(arrange_rows(rows, q, marks, source)));
    *last = Some(LastArranged {
        version,
        query: q.clone(),
        marks_version: marks.version,
        arranged: next.clone(),
    });
    next
}

#[cfg(test)]
mod tests {
    use protocol::delta::{ClientList, Keyed, Snapshot};

    use super::*;
    use crate::{
        favourites::MarkAction,
        list::{
            lobby::{tests::entry, Row, LOBBY_SOURCE},
            store::apply_next,
        },
        query::SortKey,
    };

    /// The rows of a snapshot of `servers`.
    fn rows_of(servers: Vec<Keyed>) -> ClientList<Row> {
        ClientList::from_snapshot_as(Snapshot {
            epoch: String::new(),
            seq: 0,
            servers,
        })
    }

    /// Applies to `list` a delta that upserts `upsert` and removes
    /// `remove`: what it changed.
    fn apply(list: &mut ClientList<Row>, upsert: Vec<Keyed>, remove: Vec<u64>) -> Changes<Row> {
        apply_next(list, upsert, remove).expect("a delta that applies")
    }

    /// A small deterministic generator (xorshift64), so a failure repeats.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// A server with few distinct names, counts and addresses, so sorts
    /// tie often and some servers share a mark key.
    fn server(rng: &mut Rng, id: u64) -> Keyed {
        const NAMES: [&str; 6] = ["alpha", "Bravo", "charlie", "Delta", "alpha", "écho"];
        let name = NAMES[rng.below(6) as usize];
        let max = 2 + rng.below(3) as u8;
        let mut e = entry(
            name,
            rng.below(6) as u32,
            max,
            rng.below(2) == 0,
            1 + rng.below(2),
        );
        e.address = Some(format!("10.0.0.{}", rng.below(40)));
        Keyed {
            key: None,
            id,
            entry: e,
        }
    }

    fn queries() -> Vec<ListQuery> {
        let mut out = Vec::new();
        for filters in ["", "hidefull=1&q=a", "hideempty=1&open=1&mode=2", "fav=1"] {
            for sort in SortKey::LOBBY {
                for dir in ["asc", "desc"] {
                    let text = format!("sort={}&dir={dir}&{filters}", sort.as_str());
                    out.push(ListQuery::from_query_str(&text));
                }
            }
        }
        out
    }

    /// Stars some addresses and hides others (the show switch as `show`).
    fn marks(rng: &mut Rng, show: bool) -> Marks {
        let mut m = Marks::default();
        for host in 0..40 {
            let key = format!("{LOBBY_SOURCE}|10.0.0.{host}:20000");
            match rng.below(6) {
                0 => {
                    m.apply(MarkAction::ToggleFavourite {
                        key,
                        name: "x".into(),
                        now_ms: 0.0,
                    });
                }
                1 => {
                    m.apply(MarkAction::Hide(key));
                }
                _ => {}
            }
        }
        m.apply(MarkAction::ShowHidden(show));
        m
    }

    /// A random delta on `rows`: a few servers change, join or leave.
    fn delta(rng: &mut Rng, rows: &[Row], next_id: &mut u64) -> (Vec<Keyed>, Vec<u64>) {
        let mut upsert = Vec::new();
        let mut remove = Vec::new();
        for _ in 0..1 + rng.below(6) {
            match rng.below(3) {
                0 if !rows.is_empty() => {
                    let id = rows[rng.below(rows.len() as u64) as usize].id;
                    upsert.push(server(rng, id));
                }
                1 if !rows.is_empty() => {
                    remove.push(rows[rng.below(rows.len() as u64) as usize].id)
                }
                _ => {
                    *next_id += 1 + rng.below(3);
                    upsert.push(server(rng, *next_id));
                }
            }
        }
        // The bridge never upserts and removes one id in one delta.
        upsert.retain(|k| !remove.contains(&k.id));
        upsert.sort_by_key(|k| k.id);
        upsert.dedup_by_key(|k| k.id);
        (upsert, remove)
    }

    #[test]
    fn re_placing_equals_arranging_everything_for_random_deltas() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..6 {
            let m = marks(&mut rng, round % 2 == 0);
            let mut next_id = 0;
            let first: Vec<Keyed> = (0..60)
                .map(|_| {
                    next_id += 1 + rng.below(3);
                    server(&mut rng, next_id)
                })
                .collect();
            let mut list = rows_of(first);
            for version in 2..40 {
                let (upsert, remove) = delta(&mut rng, list.items(), &mut next_id);
                let before: Vec<Arranged> = queries()
                    .iter()
                    .map(|q| arrange_rows(list.items(), q, &m, LOBBY_SOURCE))
                    .collect();
                let changes = apply(&mut list, upsert, remove);
                let new = list.items();
                for (q, before) in queries().iter().zip(&before) {
                    let whole = arrange_rows(new, q, &m, LOBBY_SOURCE);
                    let placed = rearrange(before, new, &changes, q, &m, LOBBY_SOURCE);
                    assert_eq!(placed, whole, "round {round}, version {version}, {q:?}");
                }
            }
        }
    }

    #[test]
    fn the_last_arrangement_is_reused_only_for_the_same_view() {
        let mut rng = Rng(7);
        let mut rows = rows_of((1..=50).map(|id| server(&mut rng, id)).collect());
        let q = ListQuery::from_query_str("sort=players");
        let mut m = marks(&mut rng, false);
        let mut last = None;
        let a = arrange_after(&mut last, (rows.items(), 1), None, &q, &m, LOBBY_SOURCE);
        assert_eq!(*a, arrange_rows(rows.items(), &q, &m, LOBBY_SOURCE));
        // The same version: the same arrangement.
        let again = arrange_after(&mut last, (rows.items(), 1), None, &q, &m, LOBBY_SOURCE);
        assert!(Rc::ptr_eq(&a, &again));
        // A delta from that version: re-placed, equal to a whole
        // arrangement.
        let changes = apply(&mut rows, vec![server(&mut rng, 3)], vec![7]);
        let since = Some((1, &changes));
        let b = arrange_after(&mut last, (rows.items(), 2), since, &q, &m, LOBBY_SOURCE);
        assert_eq!(*b, arrange_rows(rows.items(), &q, &m, LOBBY_SOURCE));
        // Changes from a version this arrangement did not see (one was
        // skipped): everything is arranged again, still right.
        apply(&mut rows, vec![server(&mut rng, 9)], vec![]);
        let changes = apply(&mut rows, vec![server(&mut rng, 4)], vec![12]);
        let since = Some((3, &changes));
        let c = arrange_after(&mut last, (rows.items(), 4), since, &q, &m, LOBBY_SOURCE);
        assert_eq!(*c, arrange_rows(rows.items(), &q, &m, LOBBY_SOURCE));
        // Another query or other marks: arranged again.
        let other = ListQuery::from_query_str("sort=free");
        let d = arrange_after(&mut last, (rows.items(), 4), None, &other, &m, LOBBY_SOURCE);
        assert_eq!(*d, arrange_rows(rows.items(), &other, &m, LOBBY_SOURCE));
        m.apply(MarkAction::ShowHidden(true));
        let e = arrange_after(&mut last, (rows.items(), 4), None, &other, &m, LOBBY_SOURCE);
        assert!(!Rc::ptr_eq(&d, &e));
        assert_eq!(*e, arrange_rows(rows.items(), &other, &m, LOBBY_SOURCE));
    }
}
