//! The player's own settings as one piece of shared state: the marks on
//! servers (favourites, hidden ones) and the page's language. One reducer
//! rather than two costs the bundle less; writing them to storage is the
//! provider's job (`contexts::settings`).

use std::rc::Rc;

use yew::Reducible;

use crate::{
    favourites::{MarkAction, Marks},
    i18n::Lang,
};

/// The player's settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    pub marks: Marks,
    pub lang: Lang,
    /// What the last action changed: (favourites, hidden), for the writer.
    pub dirty: (bool, bool),
}

/// Everything that changes the settings.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingsAction {
    /// A star, a hidden row, "show hidden", favourites seen in a list.
    Mark(MarkAction),
    /// Switch the page's language.
    SetLang(Lang),
}

impl From<MarkAction> for SettingsAction {
    fn from(action: MarkAction) -> Self {
        SettingsAction::Mark(action)
    }
}

impl Reducible for Settings {
    type Action = SettingsAction;

    fn reduce(self: Rc<Self>, action: SettingsAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            SettingsAction::SetLang(l) => {
                next.lang = l;
                next.dirty = (false, false);
            }
            SettingsAction::Mark(action) => {
                let dirty = next.marks.apply(action);
                if next.marks == self.marks {
                    return self;
                }
                next.dirty = dirty;
            }
        }
        Rc::new(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::favourites::tests::fav;

    #[test]
    fn marks_say_what_to_write_and_the_language_writes_no_marks() {
        let s = Rc::new(Settings::default());
        let s = s.reduce(fav("lobby|a:1").into());
        assert_eq!(s.dirty, (true, true));
        assert!(s.marks.is_favourite("lobby|a:1"));
        let s = s.reduce(SettingsAction::SetLang(Lang::De));
        assert_eq!((s.lang, s.dirty), (Lang::De, (false, false)));
        // Nothing changed: the very same state, so nothing renders.
        let same = s
            .clone()
            .reduce(MarkAction::Unhide("lobby|b:1".into()).into());
        assert!(Rc::ptr_eq(&s, &same));
    }
}
