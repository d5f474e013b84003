//! The star (favourite) and hide buttons of a row, shared by both tables.

use yew::prelude::*;

use crate::components::icon::{Icon, SvgIcon};

use crate::{
    favourites::MarkAction,
    i18n::{tf, K},
    services::browser,
};

/// Star or unstar, noting when (a new favourite was seen now).
fn toggle_action(key: String, name: String) -> MarkAction {
    MarkAction::ToggleFavourite {
        key,
        name,
        now_ms: browser::now_ms(),
    }
}

/// The star button (before the name) and the hide/unhide button (after
/// it) for the server with mark key `key`; their clicks go to `on_mark`.
pub fn marks_buttons(
    on_mark: &Callback<MarkAction>,
    key: String,
    name: String,
    favourite: bool,
    hidden: bool,
) -> (Html, Html) {
    let star = {
        let (on_mark, key, name) = (on_mark.clone(), key.clone(), name.clone());
        Callback::from(move |_: MouseEvent| on_mark.emit(toggle_action(key.clone(), name.clone())))
    };
    let star_label = tf(if favourite { K::StarRemove } else { K::StarAdd }, &[&name]);
    let star = html! {
        <button type="button" class={classes!("star", favourite.then_some("on"))} data-testid="star"
            aria-pressed={favourite.to_string()} aria-label={star_label.clone()} title={star_label}
            onclick={star}><SvgIcon icon={if favourite { Icon::Star } else { Icon::StarOutline }} /></button>
    };
    let hide = if favourite {
        html! {}
    } else {
        let on_mark = on_mark.clone();
        let label = tf(if hidden { K::UnhideRow } else { K::HideRow }, &[&name]);
        let onclick = Callback::from(move |_: MouseEvent| {
            on_mark.emit(if hidden {
                MarkAction::Unhide(key.clone())
            } else {
                MarkAction::Hide(key.clone())
            })
        });
        html! {
            <button type="button" class="hide-row" data-testid={if hidden { "unhide" } else { "hide" }}
                aria-label={label.clone()} title={label} {onclick}>
                <SvgIcon icon={if hidden { Icon::Undo } else { Icon::Close }} />
            </button>
        }
    };
    (star, hide)
}
