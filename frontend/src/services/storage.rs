//! Browser storage: the admin token in sessionStorage (gone with the tab),
//! favourites, hidden servers, watches (what to notify about), the last
//! filters and the language in localStorage (kept across reloads). The test servers keep their
//! definitions themselves (`test_servers::storage`).

use gloo_storage::{LocalStorage, SessionStorage, Storage};

const TOKEN_KEY: &str = "lobby.adminToken";

/// The admin token of this tab, if one was entered.
pub fn token() -> Option<String> {
    SessionStorage::raw()
        .get_item(TOKEN_KEY)
        .ok()
        .flatten()
        .filter(|t| !t.is_empty())
}

pub fn set_token(token: &str) {
    let _ = SessionStorage::raw().set_item(TOKEN_KEY, token);
}

const FAVOURITES_KEY: &str = "lobby.favourites";
const HIDDEN_KEY: &str = "lobby.hidden";
const FILTERS_KEY: &str = "lobby.filters";
const LANG_KEY: &str = "lobby.lang";
const WATCHES_KEY: &str = "lobby.watches";

fn local(key: &str) -> Option<String> {
    LocalStorage::raw().get_item(key).ok().flatten()
}

fn set_local(key: &str, value: &str) {
    let _ = LocalStorage::raw().set_item(key, value);
}

/// Reads a stored value with `parse`; a value it cannot read (corrupt,
/// written by something else) is replaced by `fallback`'s serialisation,
/// so the page never trips over it again.
fn read_or_reset<T>(key: &str, parse: impl Fn(&str) -> Option<T>, reset: &str) -> Option<T> {
    let raw = local(key)?;
    let parsed = parse(&raw);
    if parsed.is_none() {
        set_local(key, reset);
    }
    parsed
}

/// The stored favourites and hidden servers.
pub fn marks() -> crate::favourites::Marks {
    use crate::favourites::{favourites_text, hidden_text, parse_favourites, parse_hidden, Marks};
    Marks {
        favourites: read_or_reset(FAVOURITES_KEY, parse_favourites, &favourites_text(&[]))
            .unwrap_or_default(),
        hidden: read_or_reset(HIDDEN_KEY, parse_hidden, &hidden_text(&[])).unwrap_or_default(),
        ..Default::default()
    }
}

pub fn set_favourites(list: &[crate::favourites::Favourite]) {
    set_local(FAVOURITES_KEY, &crate::favourites::favourites_text(list));
}

pub fn set_hidden(list: &[String]) {
    set_local(HIDDEN_KEY, &crate::favourites::hidden_text(list));
}

/// The stored watches (the servers to notify about).
pub fn watches() -> Vec<crate::notify::watches::Watch> {
    use crate::notify::watches::{parse_watches, watches_text};
    read_or_reset(WATCHES_KEY, parse_watches, &watches_text(&[])).unwrap_or_default()
}

pub fn set_watches(list: &[crate::notify::watches::Watch]) {
    set_local(WATCHES_KEY, &crate::notify::watches::watches_text(list));
}

/// The last used filters, as a query string (see `ListQuery::filters`).
pub fn filters() -> Option<crate::query::ListQuery> {
    use crate::query::ListQuery;
    // Anything is a valid query string; keep only the filters of it.
    local(FILTERS_KEY).map(|s| ListQuery::from_query_str(&s).filters())
}

pub fn set_filters(q: &crate::query::ListQuery) {
    set_local(FILTERS_KEY, &q.filters().to_query_string());
}

/// The chosen language, if one was chosen and is still ours.
pub fn lang() -> Option<crate::i18n::Lang> {
    read_or_reset(LANG_KEY, crate::i18n::Lang::parse, "")
}

pub fn set_lang(l: crate::i18n::Lang) {
    set_local(LANG_KEY, l.code());
}
