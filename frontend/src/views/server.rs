//! One server's page as it shows it: its details from the lobby's live
//! list (the same socket as the list, so they change without a reload)
//! or, while it is not listed, the last state the bridge recorded
//! (`/api/servers/{key}`), and its history over the chosen range.

use std::rc::Rc;

use protocol::{
    api::{HistoryRange, ServerHistory},
    entry::ServerDetails,
    GameplayMode, Players, ServerKey,
};
use yew::prelude::*;

use crate::{
    contexts::lobby::use_lobby,
    list::lobby::{address_label, join_link},
    services::{api::read_answer, browser},
    views::fetch::{use_fetch, Load},
};

/// How often the history is read again while the page is open. Samples
/// come every `--history-interval` (a minute by default); a refresh that
/// finds no new sample is a free `304`, and a test bridge sampling every
/// second shows new points within seconds.
pub const HISTORY_REFRESH_MS: u32 = 5_000;

/// How often the recorded state (first and last seen) is read again; also
/// whenever the server joins or leaves the list.
const INFO_REFRESH_MS: u32 = 30_000;

/// What the page says about the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Details {
    pub name: String,
    /// `host:port`; `None` when the bridge hides addresses.
    pub address: Option<String>,
    /// In the lobby's list now.
    pub listed: bool,
    pub online: bool,
    pub players: Players,
    pub open: bool,
    pub mode: GameplayMode,
    /// Unix ms; `None` before the bridge recorded it.
    pub first_seen: Option<f64>,
    pub last_seen: Option<f64>,
    /// The Join link while it is listed (see `list::lobby::join_link`).
    pub join: Option<String>,
}

/// What the page shows where the details go.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Loading,
    /// Neither listed nor ever recorded.
    Missing,
    /// Not listed, and its record could not be read.
    Failed,
    Shown(Details),
}

/// A history as read, and when (where its graph's time axis ends).
#[derive(Debug, Clone, PartialEq)]
pub struct Dated<T> {
    pub value: Rc<T>,
    pub at_ms: f64,
}

/// The server page's view model.
pub struct ServerView {
    pub body: Body,
    /// `None` until the range's history is read; empty while the server
    /// is not recorded.
    pub history: Option<Dated<ServerHistory>>,
    /// Whether the history holds the server (`None` until its record is
    /// read): its week is asked for only then.
    pub recorded: Option<bool>,
    /// `performance.now()` when the server's record arrived, for the page
    /// benchmark.
    pub arrived_perf_ms: Option<f64>,
}

/// The view of server `key`, its history over `span`.
#[hook]
pub fn use_server_view(key: ServerKey, span: HistoryRange) -> ServerView {
    let lobby = use_lobby();
    let state = &*lobby.state;
    let live = state
        .list
        .rows()
        .iter()
        .find(|r| r.server == Some(key))
        .cloned();
    let listed = live.is_some();
    // The list is current: a server it lacks is offline.
    let list_current = state.list.version() > 0 && !state.disconnected();
    // A server listed but not recorded yet is asked about as often as
    // its history would be, so its history shows soon after its first
    // sample.
    let waiting = use_state_eq(|| false);
    let info = use_fetch(
        Some(format!("/api/servers/{key}")),
        u32::from(listed),
        if *waiting {
            HISTORY_REFRESH_MS
        } else {
            INFO_REFRESH_MS
        },
    );
    let record = use_memo(info.text().cloned(), |text| {
        text.as_deref().and_then(read_answer::<ServerDetails>)
    });
    let record = record.as_ref().as_ref();
    // Whether the history holds the server, as its record says: until it
    // does, its history is empty and not asked for (the bridge would
    // answer 404, which the browser reports as an error).
    let recorded = record.map(|r| r.recorded);
    {
        let waiting = waiting.clone();
        use_effect_with(recorded, move |recorded| {
            waiting.set(*recorded == Some(false));
        });
    }
    let history = use_fetch(
        (recorded == Some(true))
            .then(|| format!("/api/servers/{key}/history?range={}", span.as_str())),
        0,
        HISTORY_REFRESH_MS,
    );
    let history = match (
        use_history(&history, read_answer::<ServerHistory>),
        recorded,
    ) {
        (_, Some(false)) => Some(Dated {
            value: Rc::new(ServerHistory {
                key,
                range: span,
                // No point, so no interval between points either.
                step: 60,
                points: Vec::new(),
            }),
            at_ms: browser::now_ms(),
        }),
        (history, _) => history,
    };
    let body = match (&live, record) {
        (Some(row), _) => {
            let e = &row.entry;
            Body::Shown(Details {
                name: e.name.clone(),
                address: address_label(e),
                listed: true,
                online: true,
                players: e.stats.players,
                open: e.stats.is_lobby_open,
                mode: e.stats.gameplay_mode,
                first_seen: record.map(|r| r.first_seen as f64),
                last_seen: None,
                join: join_link(browser::join_template().as_ref(), e),
            })
        }
        (None, Some(r)) => Body::Shown(Details {
            name: r.name.clone(),
            address: crate::list::address_label(r.address.as_deref(), r.port),
            listed: false,
            // Offline unless the list has not arrived yet.
            online: r.online && !list_current,
            players: r.players,
            open: r.is_lobby_open,
            mode: r.gameplay_mode,
            first_seen: Some(r.first_seen as f64),
            last_seen: Some(r.last_seen as f64),
            // Offline: nothing to join.
            join: None,
        }),
        (None, None) => match &info {
            Load::Missing => Body::Missing,
            Load::Loading => Body::Loading,
            // Failed, or an answer that is not a record.
            _ => Body::Failed,
        },
    };
    let arrived_perf_ms = match &info {
        Load::Ready { perf_ms, .. } if record.is_some() => Some(*perf_ms),
        _ => None,
    };
    ServerView {
        body,
        history,
        recorded,
        arrived_perf_ms,
    }
}

/// A history answer read once per change of its text (`read` makes the
/// kind of history from the answer's text).
#[hook]
pub fn use_history<T: 'static>(load: &Load, read: fn(&str) -> Option<T>) -> Option<Dated<T>> {
    let (text, at_ms) = match load {
        Load::Ready { text, at_ms, .. } => (Some(text.clone()), *at_ms),
        _ => (None, 0.0),
    };
    let value = use_memo(text, move |text| read(text.as_deref()?).map(Rc::new));
    value.as_ref().clone().map(|value| Dated { value, at_ms })
}
