//! The player's own settings as one context: favourites and hidden
//! servers (kept in localStorage as they change) and the page's language.

use std::ops::Deref;

use yew::prelude::*;

use crate::{
    favourites::MarkAction,
    i18n::{self, Lang},
    services::{browser, storage},
    settings::{Settings, SettingsAction},
};

/// The marks, the language and the ways to change them.
#[derive(Clone, PartialEq)]
pub struct SettingsHandle {
    state: UseReducerHandle<Settings>,
    mark: Callback<MarkAction>,
}

impl Deref for SettingsHandle {
    type Target = Settings;

    fn deref(&self) -> &Settings {
        &self.state
    }
}

impl SettingsHandle {
    /// Where a star, a hide, "show hidden" and a list's favourites seen
    /// go. Made once per page, so rows that get it as a prop do not
    /// re-render for it.
    pub fn on_mark(&self) -> Callback<MarkAction> {
        self.mark.clone()
    }

    /// Switches the language and keeps the choice.
    pub fn set_lang(&self, l: Lang) {
        storage::set_lang(l);
        self.state.dispatch(SettingsAction::SetLang(l));
    }
}

/// Props of [`SettingsProvider`].
#[derive(Properties, PartialEq)]
pub struct SettingsProviderProps {
    #[prop_or_default]
    pub children: Html,
}

/// The language on first load: the stored choice, else the browser's.
pub fn initial_lang() -> Lang {
    storage::lang().unwrap_or_else(|| {
        let langs = browser::languages();
        Lang::pick(langs.iter().map(String::as_str))
    })
}

/// Loads the marks and the language and provides them. Its children are
/// re-mounted when the language changes, so every string is rendered again
/// (the lobby connection above it stays).
#[component]
pub fn SettingsProvider(props: &SettingsProviderProps) -> Html {
    let state = use_reducer(|| Settings {
        marks: storage::marks(),
        lang: initial_lang(),
        dirty: (false, false),
    });
    {
        // Write what changed (after the render that shows it).
        let m = state.clone();
        use_effect_with(state.clone(), move |_| {
            let (favs, hidden) = m.dirty;
            if favs {
                storage::set_favourites(&m.marks.favourites);
            }
            if hidden {
                storage::set_hidden(&m.marks.hidden);
            }
            browser::set_document_lang(m.lang.code());
        });
    }
    let mark = {
        let dispatcher = state.dispatcher();
        use_memo((), move |_| {
            Callback::from(move |action: MarkAction| dispatcher.dispatch(action.into()))
        })
    };
    i18n::set_lang(state.lang);
    let key = state.lang.code();
    let context = SettingsHandle {
        state,
        mark: (*mark).clone(),
    };
    html! {
        <ContextProvider<SettingsHandle> {context}>
            <div {key} class="lang-root">{ props.children.clone() }</div>
        </ContextProvider<SettingsHandle>>
    }
}

/// The settings; panics only when used outside [`SettingsProvider`], which
/// is a programming error, not a runtime condition.
#[hook]
pub fn use_settings() -> SettingsHandle {
    use_context::<SettingsHandle>().expect("use_settings outside SettingsProvider")
}
