//! The connection status pill: Live · Reconnecting in N s · Master unreachable.

use gloo_timers::callback::Interval;
use yew::prelude::*;

use crate::{contexts::lobby::use_lobby, services::browser, state::status_view};

/// Shows the lobby connection's state; re-renders itself every second so
/// the reconnect countdown moves.
#[component]
pub fn StatusPill() -> Html {
    let lobby = use_lobby();
    let tick = use_force_update();
    use_effect_with((), move |_| {
        let interval = Interval::new(1000, move || tick.force_update());
        move || drop(interval)
    });
    let view = status_view(&lobby.state, browser::now_ms());
    html! {
        <span class={classes!("pill", view.tone)} data-testid="status" role="status" aria-live="polite">
            <span class="dot" aria-hidden="true"></span>
            { view.text }
        </span>
    }
}
