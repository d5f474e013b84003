//! Paging, the summary line and the address cell, alike in every table.

use crate::{
    i18n::{count, tf, K},
    list::ListRow,
};

/// Rows per page; a page stays cheap to render whatever the list's size.
pub const PAGE_SIZE: usize = 100;

/// Number of pages for `count` rows (at least one).
pub fn page_count(count: usize) -> usize {
    count.div_ceil(PAGE_SIZE).max(1)
}

/// The slice of `visible` on `page`, clamping a page past the end.
pub fn page_slice(visible: &[usize], page: usize) -> (usize, &[usize]) {
    let page = page.min(page_count(visible.len()) - 1);
    let start = page * PAGE_SIZE;
    let end = (start + PAGE_SIZE).min(visible.len());
    (page, &visible[start.min(end)..end])
}

/// Totals for the summary line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    pub servers: usize,
    pub players: u64,
    /// Rows the table's third count counts (open lobbies, servers online).
    pub counted: usize,
}

pub fn summarize<T: ListRow>(rows: &[T]) -> Summary {
    summarize_iter(rows.iter())
}

fn summarize_iter<'a, T: ListRow + 'a>(rows: impl Iterator<Item = &'a T>) -> Summary {
    rows.fold(Summary::default(), |mut s, r| {
        s.servers += 1;
        s.players += u64::from(r.players().0);
        s.counted += usize::from(r.counted());
        s
    })
}

/// `prev`, the summary of a list, after the rows `out` left it and the
/// rows `put` came: an update's summary in proportion to what it changed.
pub fn resummarize<'a, T: ListRow + 'a>(
    prev: Summary,
    out: impl Iterator<Item = &'a T>,
    put: impl Iterator<Item = &'a T>,
) -> Summary {
    let (gone, came) = (summarize_iter(out), summarize_iter(put));
    Summary {
        servers: (prev.servers + came.servers).saturating_sub(gone.servers),
        players: (prev.players + came.players).saturating_sub(gone.players),
        counted: (prev.counted + came.counted).saturating_sub(gone.counted),
    }
}

/// "N servers · M players · K open" (or "K online" for a game source; the
/// filters' effect is said beside it, see `browser_chrome::filter_note`).
pub fn summary_text<T: ListRow>(s: Summary) -> String {
    format!(
        "{} · {} · {}",
        count(s.servers as u64, K::ServerOne, K::ServerMany),
        count(s.players, K::PlayerOne, K::PlayerMany),
        tf(T::COUNTED, &[&s.counted])
    )
}

/// `host:port`, with IPv6 addresses in brackets; `None` when the bridge
/// hides addresses.
pub fn address_label(address: Option<&str>, port: Option<u16>) -> Option<String> {
    let addr = address?;
    Some(match port {
        Some(p) if addr.contains(':') => format!("[{addr}]:{p}"),
        Some(p) => format!("{addr}:{p}"),
        None => addr.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging() {
        let idx: Vec<usize> = (0..250).collect();
        assert_eq!(page_count(0), 1);
        assert_eq!(page_count(250), 3);
        assert_eq!(page_slice(&idx, 0).1.len(), 100);
        let (p, last) = page_slice(&idx, 2);
        assert_eq!((p, last.len(), last[0]), (2, 50, 200));
        assert_eq!(page_slice(&idx, 99).0, 2);
        assert_eq!(page_slice(&[], 3), (0, &[][..]));
    }

    #[test]
    fn addresses() {
        assert_eq!(
            address_label(Some("fd40:9dc7:b528::1"), Some(20000)).as_deref(),
            Some("[fd40:9dc7:b528::1]:20000")
        );
        assert_eq!(
            address_label(Some("10.0.0.1"), Some(1)).as_deref(),
            Some("10.0.0.1:1")
        );
        assert_eq!(address_label(Some("h"), None).as_deref(), Some("h"));
        assert_eq!(address_label(None, Some(1)), None);
    }
}
