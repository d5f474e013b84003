//! What the lobby's list and other games' lists show around their tables:
//! the summary line, warnings about stale data, the empty state before the
//! first data arrives.

use yew::prelude::*;

use protocol::bridge::MasterState;

use crate::{
    components::{empty_state::EmptyState, updated_ago::UpdatedAgo},
    state::{Conn, State},
};

/// Props of [`ListMeta`].
#[derive(Properties, PartialEq)]
pub struct ListMetaProps {
    /// The summary line (empty before data arrives).
    pub summary: String,
    /// When the shown data arrived.
    pub at_ms: Option<f64>,
    /// A warning that the data may be out of date.
    #[prop_or_default]
    pub stale: Option<&'static str>,
    /// The bridge's last error message.
    #[prop_or_default]
    pub error: Option<String>,
}

/// Summary, age and banners above a table.
#[component]
pub fn ListMeta(props: &ListMetaProps) -> Html {
    html! {
        <>
            <div class="meta">
                <span data-testid="summary" class="summary">{ props.summary.clone() }</span>
                <UpdatedAgo at_ms={props.at_ms} />
            </div>
            if let Some(text) = props.stale {
                <p class="banner warn" role="alert" data-testid="stale">{ text }</p>
            }
            if let Some(err) = &props.error {
                <p class="banner" role="status">{ format!("The bridge says: {err}") }</p>
            }
        </>
    }
}

/// Whether the connection that brought the shown data is gone and no
/// list came on a new one yet (data shown then may be out of date).
pub fn disconnected(state: &State) -> bool {
    matches!(state.conn, Conn::Waiting { .. }) || !state.receiving
}

/// Why the shown lobby list may be out of date, if it may.
pub fn stale_text(state: &State) -> Option<&'static str> {
    if disconnected(state) {
        Some("The connection to the lobby was lost; this is the last list received. Reconnecting by itself.")
    } else if state.master == Some(MasterState::Down) {
        Some("The master server is unreachable; this is the last list it sent.")
    } else {
        None
    }
}

/// The empty state before any data arrived: loading, or unreachable while
/// the connection waits to retry.
pub fn empty_before_list(conn: Conn) -> Html {
    match conn {
        Conn::Waiting { .. } => html! {
            <EmptyState title="Can't reach the lobby right now"
                detail="The page keeps trying by itself; the list appears as soon as the connection is back." />
        },
        _ => html! { <EmptyState title="Loading servers…" detail="Connecting to the lobby." /> },
    }
}

/// Back to the top after changing pages, so the new page starts at its
/// first row.
pub fn scroll_to_top() {
    if let Some(w) = web_sys::window() {
        w.scroll_to_with_x_and_y(0.0, 0.0);
    }
}
