//! "updated N s ago", ticking by itself.

use gloo_timers::callback::Interval;
use yew::prelude::*;

use crate::{i18n::ago_text, services::browser};

/// Props of [`UpdatedAgo`].
#[derive(Properties, PartialEq)]
pub struct UpdatedAgoProps {
    /// When the list arrived (`Date.now()`), if it has.
    pub at_ms: Option<f64>,
}

/// Re-renders itself every second; nothing else re-renders for it.
#[component]
pub fn UpdatedAgo(props: &UpdatedAgoProps) -> Html {
    let tick = use_force_update();
    use_effect_with((), move |_| {
        let interval = Interval::new(1000, move || tick.force_update());
        move || drop(interval)
    });
    match props.at_ms {
        Some(at) => html! {
            <span class="ago" data-testid="updated">{ ago_text(browser::now_ms(), at) }</span>
        },
        None => html! {},
    }
}
