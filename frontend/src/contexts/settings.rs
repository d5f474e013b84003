//! The player's own settings as one context: favourites and hidden
//! servers (kept in localStorage as they change) and the page's language.

use yew::prelude::*;

use crate::{
    i18n::{self, Lang},
    services::{browser, storage},
    settings::{Settings, SettingsAction},
};

/// The marks, the language and a way to change them; the dispatcher is
/// stable, so rows that get it as a prop do not re-render for it.
pub type SettingsHandle = UseReducerHandle<Settings>;

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
    i18n::set_lang(state.lang);
    let key = state.lang.code();
    html! {
        <ContextProvider<SettingsHandle> context={state}>
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

/// Switches the language and keeps the choice.
pub fn set_lang(settings: &SettingsHandle, l: Lang) {
    storage::set_lang(l);
    settings.dispatch(SettingsAction::SetLang(l));
}
