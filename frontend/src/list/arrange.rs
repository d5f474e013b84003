//! Arranging a table's rows around the player's marks: favourites pinned
//! first and never filtered out, hidden rows left out unless shown.

use std::cmp::Ordering;

use crate::favourites::Marks;

/// A table's rows arranged for display.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Arranged {
    /// Row indices in display order: favourites first (pinned), then the
    /// rest, each part in the view's sort order.
    pub idx: Vec<usize>,
    /// Favourites at the start of `idx`.
    pub pinned: usize,
    /// Row indices of favourites shown although the filters do not match.
    pub unmatched: Vec<usize>,
    /// Row indices of hidden rows shown because "show hidden" is on.
    pub hidden_shown: Vec<usize>,
    /// Rows the filters hide (not counting hidden rows).
    pub filtered_out: usize,
    /// Hidden rows in the list.
    pub hidden: usize,
    /// Keys of favourites that are in the list, with their names.
    pub present: Vec<(String, String)>,
}

/// Where the arranging puts one row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Place {
    /// Pinned; `matches` says whether the filters would keep it.
    Favourite { key: String, matches: bool },
    /// Hidden; `shown` when "show hidden" is on and the filters keep it.
    Hidden { shown: bool },
    /// Left out by the filters (or by "favourites only").
    Out,
    /// Shown after the favourites.
    Rest,
}

/// Where a row goes: `key` is its mark key (asked only when there are
/// marks), `ok` whether the view's filters keep it. The one rule for a
/// whole arrangement and for re-placing the rows an update changed.
pub(crate) fn place(
    marks: &Marks,
    favourites_only: bool,
    key: impl FnOnce() -> String,
    ok: bool,
) -> Place {
    if !marks.favourites.is_empty() || !marks.hidden.is_empty() {
        let key = key();
        if marks.is_favourite(&key) {
            return Place::Favourite { key, matches: ok };
        }
        if marks.is_hidden(&key) {
            let shown = marks.show_hidden && ok && !favourites_only;
            return Place::Hidden { shown };
        }
    }
    if ok && !favourites_only {
        Place::Rest
    } else {
        Place::Out
    }
}

/// Arranges `n` rows: `key(i)` and `name(i)` identify row `i`, `matches(i)`
/// says whether the view's filters keep it, `cmp` is the view's order.
/// Favourites show whatever the filters say (marked when not matching)
/// and come first; hidden rows are left out unless shown; with
/// `favourites_only` only favourites remain.
/// One copy for both tables (`dyn`, not generic): the bundle pays for one
/// sort, not one per table.
pub fn arrange(
    n: usize,
    marks: &Marks,
    favourites_only: bool,
    key: &dyn Fn(usize) -> String,
    name: &dyn Fn(usize) -> String,
    matches: &dyn Fn(usize) -> bool,
    cmp: &dyn Fn(usize, usize) -> Ordering,
) -> Arranged {
    let mut out = Arranged::default();
    let mut favs = Vec::new();
    let mut rest = Vec::new();
    for i in 0..n {
        match place(marks, favourites_only, || key(i), matches(i)) {
            Place::Favourite { key, matches } => {
                if !matches {
                    out.unmatched.push(i);
                }
                out.present.push((key, name(i)));
                favs.push(i);
            }
            Place::Hidden { shown } => {
                out.hidden += 1;
                if shown {
                    out.hidden_shown.push(i);
                    rest.push(i);
                }
            }
            Place::Out => out.filtered_out += 1,
            Place::Rest => rest.push(i),
        }
    }
    favs.sort_unstable_by(|&a, &b| cmp(a, b));
    rest.sort_unstable_by(|&a, &b| cmp(a, b));
    out.pinned = favs.len();
    out.idx = favs;
    out.idx.extend(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::favourites::{tests::fav, MarkAction};

    /// Rows 0..5 named by index; `keep` is the filter.
    fn arranged(m: &Marks, fav_only: bool, keep: &[usize]) -> Arranged {
        let names = ["delta", "alpha", "echo", "bravo", "charlie"];
        arrange(
            names.len(),
            m,
            fav_only,
            &|i| format!("lobby|h:{i}"),
            &|i| names[i].to_owned(),
            &|i| keep.contains(&i),
            &|a, b| names[a].cmp(names[b]),
        )
    }

    #[test]
    fn favourites_are_pinned_and_never_filtered_out() {
        let mut m = Marks::default();
        let all = [0, 1, 2, 3, 4];
        assert_eq!(arranged(&m, false, &all).idx, [1, 3, 4, 0, 2]);
        m.apply(fav("lobby|h:2"));
        m.apply(fav("lobby|h:0"));
        let a = arranged(&m, false, &all);
        assert_eq!(a.idx, [0, 2, 1, 3, 4]);
        assert_eq!(a.pinned, 2);
        assert!(a.unmatched.is_empty());
        // The filter drops echo (2) and bravo (3): echo stays, marked.
        let a = arranged(&m, false, &[0, 1, 4]);
        assert_eq!(a.idx, [0, 2, 1, 4]);
        assert_eq!(a.unmatched, [2]);
        assert_eq!(a.filtered_out, 1);
        // Favourites only.
        let a = arranged(&m, true, &all);
        assert_eq!(a.idx, [0, 2]);
        assert_eq!(a.filtered_out, 3);
        assert_eq!(a.present.len(), 2);
    }

    #[test]
    fn hidden_rows_are_counted_and_shown_on_request() {
        let mut m = Marks::default();
        m.apply(MarkAction::Hide("lobby|h:1".into()));
        m.apply(MarkAction::Hide("lobby|h:3".into()));
        let a = arranged(&m, false, &[0, 1, 2, 4]);
        assert_eq!(a.idx, [4, 0, 2]);
        assert_eq!((a.hidden, a.filtered_out), (2, 0));
        m.apply(MarkAction::ShowHidden(true));
        let a = arranged(&m, false, &[0, 1, 2, 4]);
        // Bravo (3) is hidden and filtered: it stays out.
        assert_eq!(a.idx, [1, 4, 0, 2]);
        assert_eq!(a.hidden_shown, [1]);
        m.apply(MarkAction::Unhide("lobby|h:1".into()));
        m.apply(MarkAction::Unhide("lobby|h:3".into()));
        assert!(!m.show_hidden);
        assert_eq!(m.hidden_of("lobby"), 0);
    }
}
