//! Which rows are new: a row whose key was not in any earlier list of this
//! page carries "new" for [`NEW_FOR_MS`]. Rows of the first list are not
//! new (the page just opened). Kept beside the list rather than in it, so
//! it works whatever way the list arrives.

use std::{collections::HashMap, rc::Rc};

/// How long a row counts as new.
pub const NEW_FOR_MS: f64 = 6_000.0;

/// Keys seen so far and when the new ones appeared.
#[derive(Debug, Default)]
pub struct Fresh {
    version: Option<u32>,
    /// Every key seen, with the second (`Date.now()` / 1000) it first
    /// appeared, 0 for the first list. (`u32`, like the whole-list
    /// numbering's map in `list::store`, so the bundle carries one hash
    /// map less.)
    seen: HashMap<Rc<str>, u32>,
}

impl Fresh {
    /// Notes list `version` of `len` rows (observing the same version
    /// twice does nothing). `all` are the list's keys, read only for the
    /// first list; `changed` the keys of the rows new or changed in this
    /// version, the only ones that can be new, so an update costs what it
    /// changed, whatever the list's size.
    pub fn observe<'a>(
        &mut self,
        (version, len): (u32, usize),
        now_ms: f64,
        all: impl Iterator<Item = &'a Rc<str>>,
        changed: impl Iterator<Item = &'a Rc<str>>,
    ) {
        if self.version == Some(version) {
            return;
        }
        let first = self.version.is_none();
        self.version = Some(version);
        if first {
            for key in all {
                self.seen.entry(key.clone()).or_insert(0);
            }
        } else {
            let now = secs(now_ms);
            for key in changed {
                self.seen.entry(key.clone()).or_insert(now);
            }
        }
        // Bounded: forget servers long gone once the map is twice the list
        // (a key seen again later then counts as new again, which it is).
        if self.seen.len() > 2 * len + 64 {
            self.seen.retain(|_, at| *at > 0 && is_recent(*at, now_ms));
        }
    }

    /// Whether the row with `key` is new at `now_ms`.
    pub fn is_new(&self, key: &str, now_ms: f64) -> bool {
        self.seen
            .get(key)
            .is_some_and(|&at| at > 0 && is_recent(at, now_ms))
    }
}

fn secs(ms: f64) -> u32 {
    (ms / 1000.0).clamp(1.0, f64::from(u32::MAX)) as u32
}

fn is_recent(at: u32, now_ms: f64) -> bool {
    now_ms - f64::from(at) * 1000.0 < NEW_FOR_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rows_after_the_first_list_are_new_for_a_while() {
        let (a, b, c): (Rc<str>, Rc<str>, Rc<str>) = ("a".into(), "b".into(), "c".into());
        let mut f = Fresh::default();
        let none = std::iter::empty;
        f.observe((1, 2), 1000.0, [&a, &b].into_iter(), [&a].into_iter());
        assert!(!f.is_new("a", 1000.0));
        assert!(!f.is_new("b", 1000.0));
        f.observe((2, 3), 2000.0, none(), [&a, &c].into_iter());
        assert!(!f.is_new("a", 2000.0), "a changed, it is not new");
        assert!(f.is_new("c", 2500.0));
        assert!(!f.is_new("c", 2000.0 + NEW_FOR_MS));
        // The same version again changes nothing.
        f.observe((2, 3), 9000.0, none(), [&c].into_iter());
        assert!(f.is_new("c", 3000.0));
        // Only the changed keys are read after the first list.
        let d: Rc<str> = "d".into();
        f.observe((3, 3), 3000.0, [&d].into_iter(), none());
        assert!(!f.is_new("d", 3000.0));
    }
}
