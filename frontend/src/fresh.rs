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
    /// numbering's map in `listing::store`, so the bundle carries one hash
    /// map less.)
    seen: HashMap<Rc<str>, u32>,
}

impl Fresh {
    /// Notes list `version` (observing the same version twice does
    /// nothing). `keys` are the list's keys with whether they changed in
    /// this version; only those can be new, so an update without changes
    /// costs one pass without hashing.
    pub fn observe<'a>(
        &mut self,
        version: u32,
        now_ms: f64,
        keys: impl Iterator<Item = (&'a Rc<str>, bool)>,
    ) {
        if self.version == Some(version) {
            return;
        }
        let first = self.version.is_none();
        let now = secs(now_ms);
        self.version = Some(version);
        let mut count = 0usize;
        for (key, changed) in keys {
            count += 1;
            if first || changed {
                self.seen
                    .entry(key.clone())
                    .or_insert(if first { 0 } else { now });
            }
        }
        // Bounded: forget servers long gone once the map is twice the list
        // (a key seen again later then counts as new again, which it is).
        if self.seen.len() > 2 * count + 64 {
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
        f.observe(1, 1000.0, [(&a, false), (&b, false)].into_iter());
        assert!(!f.is_new("a", 1000.0));
        f.observe(2, 2000.0, [(&a, true), (&b, false), (&c, true)].into_iter());
        assert!(!f.is_new("a", 2000.0), "a changed, it is not new");
        assert!(f.is_new("c", 2500.0));
        assert!(!f.is_new("c", 2000.0 + NEW_FOR_MS));
        // The same version again changes nothing.
        f.observe(2, 9000.0, [(&c, true)].into_iter());
        assert!(f.is_new("c", 3000.0));
    }
}
