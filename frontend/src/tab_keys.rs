//! Keyboard navigation of a tab bar (the WAI-ARIA tabs pattern), as a plain
//! function of the key so it is tested natively.

/// The tab a key moves to in a tab bar of `len` tabs: arrows wrap
/// around, Home and End go to the ends; `None` for other keys.
pub fn next_tab(current: Option<usize>, len: usize, key: &str) -> Option<usize> {
    if len == 0 {
        return None;
    }
    let i = current.unwrap_or(0).min(len - 1);
    match key {
        "ArrowRight" => Some((i + 1) % len),
        "ArrowLeft" => Some((i + len - 1) % len),
        "Home" => Some(0),
        "End" => Some(len - 1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_wrap_and_home_end_go_to_the_ends() {
        assert_eq!(next_tab(Some(0), 3, "ArrowRight"), Some(1));
        assert_eq!(next_tab(Some(2), 3, "ArrowRight"), Some(0));
        assert_eq!(next_tab(Some(0), 3, "ArrowLeft"), Some(2));
        assert_eq!(next_tab(Some(1), 3, "Home"), Some(0));
        assert_eq!(next_tab(None, 3, "End"), Some(2));
        assert_eq!(next_tab(None, 3, "ArrowRight"), Some(1));
        assert_eq!(next_tab(Some(1), 3, "Enter"), None);
        assert_eq!(next_tab(Some(0), 0, "ArrowRight"), None);
    }
}
