//! The lobby's totals over the last 24 hours (servers and players online)
//! as a small graph under the list; nothing when the bridge keeps no
//! history (an older bridge, or the list comes from another one).

use std::rc::Rc;

use protocol::api::{HistoryRange, LobbyHistory};
use yew::prelude::*;

use crate::{
    components::{
        history_graph::{GraphLine, HistoryGraph},
        week_heatmap::WeekHeatmap,
    },
    history::{csv_link, peak_players, players_online, servers_online, step_ms},
    i18n::{t, K},
    services::api::read_answer,
    views::{
        fetch::use_fetch,
        server::{use_history, Dated},
    },
};

/// The totals' answer.
const PATH: &str = "/api/history?range=24h";

/// How often the totals are read again (a free `304` until a sample).
const REFRESH_MS: u32 = 60_000;

/// The totals' graph, with its legend.
#[component]
pub fn LobbyTotals() -> Html {
    let load = use_fetch(Some(PATH.to_owned()), 0, REFRESH_MS);
    let Some(Dated { value, at_ms }) = use_history(&load, read_answer::<LobbyHistory>) else {
        return html! {};
    };
    let lines = vec![
        GraphLine {
            series: Rc::new(players_online(&value)),
            class: "players",
            what: t(K::PlayersOnline),
        },
        GraphLine {
            series: Rc::new(peak_players(&value)),
            class: "peak",
            what: t(K::PeakPlayers),
        },
        GraphLine {
            series: Rc::new(servers_online(&value)),
            class: "servers",
            what: t(K::ServersOnline),
        },
    ];
    html! {
        <section class="card totals" aria-labelledby="totals-title" data-testid="lobby-totals">
            <h2 id="totals-title">{ t(K::LobbyTotals) }</h2>
            <ul class="legend" aria-hidden="true">
                <li class="players">{ t(K::PlayersOnline) }</li>
                <li class="peak">{ t(K::PeakPlayers) }</li>
                <li class="servers">{ t(K::ServersOnline) }</li>
            </ul>
            <HistoryGraph lines={lines} step_ms={step_ms(value.step)} span={HistoryRange::Day}
                to_ms={at_ms} small=true testid="totals-graph" />
            <p><a href={csv_link(PATH)} download="lobby-history.csv">{ t(K::DownloadCsv) }</a></p>
            <WeekHeatmap path="/api/week" testid="lobby-week" />
        </section>
    }
}
