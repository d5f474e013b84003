//! The player's own settings as contexts: favourites and hidden servers
//! (kept in localStorage as they change) and the page's language.

use yew::prelude::*;

use crate::{
    favourites::{MarkAction, MarksState},
    i18n::{self, Lang},
    services::{browser, storage},
};

/// The marks and a way to change them; the dispatcher is stable, so rows
/// that get it as a prop do not re-render for it.
pub type MarksHandle = UseReducerHandle<MarksState>;

/// The language and a way to switch it.
#[derive(Clone, PartialEq)]
pub struct LangHandle {
    pub lang: Lang,
    pub set: Callback<Lang>,
}

/// Props of [`MarksProvider`].
#[derive(Properties, PartialEq)]
pub struct MarksProviderProps {
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

/// Loads the marks and the language and provides both. Its children are
/// re-mounted when the language changes, so every string is rendered again
/// (the lobby connection above it stays).
#[component]
pub fn MarksProvider(props: &MarksProviderProps) -> Html {
    let marks = use_reducer(|| MarksState {
        marks: storage::marks(),
        dirty: (false, false),
    });
    {
        // Write what changed (after the render that shows it).
        let m = marks.clone();
        use_effect_with(marks.clone(), move |_| {
            let (favs, hidden) = m.dirty;
            if favs {
                storage::set_favourites(&m.marks.favourites);
            }
            if hidden {
                storage::set_hidden(&m.marks.hidden);
            }
        });
    }
    let lang = use_state(|| {
        let l = initial_lang();
        i18n::set_lang(l);
        l
    });
    {
        use_effect_with(*lang, |l| {
            browser::set_document_lang(l.code());
        });
    }
    let handle = LangHandle {
        lang: *lang,
        set: {
            let lang = lang.clone();
            Callback::from(move |l: Lang| {
                i18n::set_lang(l);
                storage::set_lang(l);
                lang.set(l);
            })
        },
    };
    i18n::set_lang(*lang);
    html! {
        <ContextProvider<LangHandle> context={handle}>
            <ContextProvider<MarksHandle> context={marks}>
                <div key={lang.code()} class="lang-root">{ props.children.clone() }</div>
            </ContextProvider<MarksHandle>>
        </ContextProvider<LangHandle>>
    }
}

/// The marks; outside [`MarksProvider`] (component tests) a fresh,
/// unsaved set.
#[hook]
pub fn use_marks() -> MarksHandle {
    let own = use_reducer(MarksState::default);
    use_context::<MarksHandle>().unwrap_or(own)
}

/// The language handle; outside [`MarksProvider`], English without a
/// switcher.
#[hook]
pub fn use_lang() -> LangHandle {
    use_context::<LangHandle>().unwrap_or(LangHandle {
        lang: Lang::En,
        set: Callback::noop(),
    })
}

/// Shorthand used by rows: star or unstar.
pub fn toggle_action(key: String, name: String) -> MarkAction {
    MarkAction::ToggleFavourite {
        key,
        name,
        now_ms: browser::now_ms(),
    }
}
