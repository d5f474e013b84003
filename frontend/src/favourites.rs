//! A player's own marks on servers: favourites (pinned, never hidden by
//! filters, kept greyed while offline) and hidden servers. Plain data with
//! a plain-text form for localStorage (the arranging is `list::arrange`);
//! tested natively.

/// Favourites kept at most; a click beyond it is ignored (the storage
/// value stays small and every list update stays cheap).
pub const MAX_FAVOURITES: usize = 200;
/// Hidden servers kept at most; the oldest go first.
pub const MAX_HIDDEN: usize = 1000;
/// Longer keys are not stored (a real `source|host:port` is far shorter).
const MAX_KEY_LEN: usize = 400;
/// "last seen" is refreshed (and written) at most this often.
const SEEN_EVERY_MS: f64 = 5_000.0;

/// The key of a server within `source` (`lobby` or a game source's id):
/// its address and port when known, so a favourite that comes back under
/// another name is still found; else its name.
pub fn server_key(source: &str, address: Option<&str>, name: &str) -> String {
    match address {
        Some(a) => format!("{source}|{a}"),
        None => format!("{source}|name:{name}"),
    }
}

/// A favourite: its key, the name it was last seen with, and when
/// (`Date.now()` milliseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct Favourite {
    pub key: String,
    pub name: String,
    pub seen_ms: f64,
}

/// The stored marks plus what only lives for the page (showing hidden
/// rows).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Marks {
    pub favourites: Vec<Favourite>,
    pub hidden: Vec<String>,
    /// Hidden rows are shown (greyed, with "unhide") until toggled off.
    pub show_hidden: bool,
    /// Bumped when the favourites or hidden sets change (not for "last
    /// seen"), so memos over the list recompute only then.
    pub version: u32,
}

fn key_ok(k: &str) -> bool {
    !k.is_empty() && k.len() <= MAX_KEY_LEN && k.contains('|')
}

/// The first line of the stored favourites: anything else is not ours.
const FAVOURITES_HEADER: &str = "lobby-favourites-1";
/// The first line of the stored hidden servers.
const HIDDEN_HEADER: &str = "lobby-hidden-1";

/// Reads stored favourites (a header line, then `key TAB seen TAB name`
/// lines, a plain format that costs the bundle nothing). A value without
/// the header (corrupt, another program's) gives `None`; bad lines,
/// repeats and lines past the cap are dropped.
pub fn parse_favourites(text: &str) -> Option<Vec<Favourite>> {
    let mut lines = text.lines();
    if lines.next() != Some(FAVOURITES_HEADER) {
        return None;
    }
    let mut list: Vec<Favourite> = Vec::new();
    for line in lines {
        let mut parts = line.splitn(3, '\t');
        let (Some(key), Some(seen), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        // Whole milliseconds: parsing floats would cost the bundle kilobytes.
        let Ok(seen_ms) = seen.parse::<u64>() else {
            continue;
        };
        if key_ok(key) && !list.iter().any(|f| f.key == key) {
            list.push(Favourite {
                key: key.to_owned(),
                name: name.to_owned(),
                seen_ms: seen_ms as f64,
            });
        }
        if list.len() == MAX_FAVOURITES {
            break;
        }
    }
    Some(list)
}

/// Reads stored hidden keys (a header line, then one key a line), like
/// [`parse_favourites`]; past the cap the oldest go.
pub fn parse_hidden(text: &str) -> Option<Vec<String>> {
    let mut lines = text.lines();
    if lines.next() != Some(HIDDEN_HEADER) {
        return None;
    }
    let mut list: Vec<String> = Vec::new();
    for key in lines {
        if key_ok(key) && !list.iter().any(|k| k == key) {
            list.push(key.to_owned());
        }
    }
    let extra = list.len().saturating_sub(MAX_HIDDEN);
    list.drain(..extra);
    Some(list)
}

/// Tabs and line breaks in a server's name would break the line format.
fn one_line(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

pub fn favourites_text(list: &[Favourite]) -> String {
    let mut out = String::from(FAVOURITES_HEADER);
    for f in list {
        out.push('\n');
        out.push_str(&one_line(&f.key));
        out.push('\t');
        out.push_str(&(f.seen_ms.max(0.0) as u64).to_string());
        out.push('\t');
        out.push_str(&one_line(&f.name));
    }
    out
}

pub fn hidden_text(list: &[String]) -> String {
    let mut out = String::from(HIDDEN_HEADER);
    for k in list {
        out.push('\n');
        out.push_str(&one_line(k));
    }
    out
}

impl Marks {
    pub fn is_favourite(&self, key: &str) -> bool {
        self.favourites.iter().any(|f| f.key == key)
    }

    pub fn is_hidden(&self, key: &str) -> bool {
        self.hidden.iter().any(|k| k == key)
    }

    /// Favourites of `source` (keys start with `source|`).
    pub fn favourites_of<'a>(&'a self, source: &'a str) -> impl Iterator<Item = &'a Favourite> {
        self.favourites
            .iter()
            .filter(move |f| f.key.split_once('|').is_some_and(|(s, _)| s == source))
    }

    /// Hidden keys of `source`.
    pub fn hidden_of(&self, source: &str) -> usize {
        self.hidden
            .iter()
            .filter(|k| k.split_once('|').is_some_and(|(s, _)| s == source))
            .count()
    }
}

/// Everything that changes the marks.
#[derive(Debug, Clone, PartialEq)]
pub enum MarkAction {
    /// Star or unstar; starring unhides.
    ToggleFavourite {
        key: String,
        name: String,
        now_ms: f64,
    },
    /// Hide a row; a favourite stays (favourites are never hidden).
    Hide(String),
    Unhide(String),
    ShowHidden(bool),
    /// These favourites are in the list received at `at_ms` (key, name).
    Seen {
        pairs: Vec<(String, String)>,
        at_ms: f64,
    },
}

impl Marks {
    /// The pure reducer; `Some(changed stored parts)` tells the caller
    /// what to write: (favourites, hidden).
    pub fn apply(&mut self, action: MarkAction) -> (bool, bool) {
        match action {
            MarkAction::ToggleFavourite { key, name, now_ms } => {
                if !key_ok(&key) {
                    return (false, false);
                }
                if let Some(i) = self.favourites.iter().position(|f| f.key == key) {
                    self.favourites.remove(i);
                } else if self.favourites.len() < MAX_FAVOURITES {
                    self.hidden.retain(|k| *k != key);
                    self.favourites.push(Favourite {
                        key,
                        name,
                        seen_ms: now_ms,
                    });
                } else {
                    return (false, false);
                }
                self.version = self.version.wrapping_add(1);
                (true, true)
            }
            MarkAction::Hide(key) => {
                if !key_ok(&key) || self.is_hidden(&key) || self.is_favourite(&key) {
                    return (false, false);
                }
                if self.hidden.len() >= MAX_HIDDEN {
                    self.hidden.remove(0);
                }
                self.hidden.push(key);
                self.version = self.version.wrapping_add(1);
                (false, true)
            }
            MarkAction::Unhide(key) => {
                let before = self.hidden.len();
                self.hidden.retain(|k| *k != key);
                if self.hidden.len() == before {
                    return (false, false);
                }
                if self.hidden.is_empty() {
                    self.show_hidden = false;
                }
                self.version = self.version.wrapping_add(1);
                (false, true)
            }
            MarkAction::ShowHidden(on) => {
                self.show_hidden = on;
                self.version = self.version.wrapping_add(1);
                (false, false)
            }
            MarkAction::Seen { pairs, at_ms } => {
                let mut changed = false;
                for (key, name) in pairs {
                    if let Some(f) = self.favourites.iter_mut().find(|f| f.key == key) {
                        if at_ms - f.seen_ms >= SEEN_EVERY_MS || f.name != name {
                            f.seen_ms = at_ms;
                            f.name = name;
                            changed = true;
                        }
                    }
                }
                (changed, false)
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Stars `key` (named after it).
    pub(crate) fn fav(key: &str) -> MarkAction {
        MarkAction::ToggleFavourite {
            key: key.into(),
            name: key.into(),
            now_ms: 1.0,
        }
    }

    #[test]
    fn keys_prefer_the_address() {
        assert_eq!(
            server_key("lobby", Some("1.2.3.4:5"), "A"),
            "lobby|1.2.3.4:5"
        );
        assert_eq!(server_key("lobby", None, "A"), "lobby|name:A");
    }

    #[test]
    fn corrupt_storage_is_ignored() {
        assert_eq!(parse_favourites("not ours"), None);
        assert_eq!(parse_favourites("[{\"k\":1}]"), None);
        assert_eq!(parse_hidden(""), None);
        assert_eq!(parse_hidden("lobby-favourites-1\nlobby|a:1"), None);
        let list = parse_favourites(
            "lobby-favourites-1\nlobby|a:1\t5\tA b\nnobar\t1\tB\nlobby|a:1\t1\tdup\nlobby|b:1\tNaN\tC\ngarbage",
        )
        .expect("ours");
        assert_eq!(list.len(), 1);
        assert_eq!((list[0].name.as_str(), list[0].seen_ms), ("A b", 5.0));
        let long = format!("lobby-hidden-1\nlobby|{}\nlobby|ok:1", "x".repeat(500));
        assert_eq!(parse_hidden(&long), Some(vec!["lobby|ok:1".to_owned()]));
        let odd = vec![Favourite {
            key: "lobby|h:1".into(),
            name: "tab\there\nnewline".into(),
            seen_ms: 7.0,
        }];
        let back = parse_favourites(&favourites_text(&odd)).expect("ours");
        assert_eq!(back[0].name, "tab here newline");
        assert_eq!(back[0].seen_ms, 7.0);
        let hidden = vec!["lobby|a:1".to_owned(), "lobby|b:2".to_owned()];
        assert_eq!(parse_hidden(&hidden_text(&hidden)), Some(hidden));
    }

    #[test]
    fn starring_unhides_and_favourites_cannot_be_hidden() {
        let mut m = Marks::default();
        assert_eq!(m.apply(MarkAction::Hide("lobby|a:1".into())), (false, true));
        assert_eq!(m.apply(fav("lobby|a:1")), (true, true));
        assert!(m.hidden.is_empty());
        assert_eq!(
            m.apply(MarkAction::Hide("lobby|a:1".into())),
            (false, false)
        );
        assert_eq!(m.apply(fav("lobby|a:1")), (true, true));
        assert!(m.favourites.is_empty());
        for i in 0..MAX_FAVOURITES + 5 {
            m.apply(fav(&format!("lobby|h:{i}")));
        }
        assert_eq!(m.favourites.len(), MAX_FAVOURITES);
    }

    #[test]
    fn seen_follows_renames_and_is_throttled() {
        let mut m = Marks::default();
        m.apply(fav("lobby|a:1"));
        let seen = |at| MarkAction::Seen {
            pairs: vec![("lobby|a:1".into(), "Renamed".into())],
            at_ms: at,
        };
        assert_eq!(m.apply(seen(2.0)), (true, false));
        assert_eq!(m.favourites[0].name, "Renamed");
        assert_eq!(m.apply(seen(3.0)), (false, false));
        assert_eq!(m.apply(seen(10_000.0)), (true, false));
        assert_eq!(m.favourites[0].seen_ms, 10_000.0);
    }
}
