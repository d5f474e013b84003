//! `/server/{key}`: one server's page (its live state, when it was seen,
//! its history as graphs, and the snippets that embed its badge), and
//! `/embed/server/{key}`, the same server as a compact live card for an
//! iframe. Both draw the view model of `views::server`.

use std::rc::Rc;

use protocol::{
    api::{HistoryRange, ServerHistory},
    ServerKey,
};
use yew::prelude::*;

use crate::{
    components::{
        copy_address::CopyAddress,
        embed_snippets::EmbedSnippets,
        empty_state::EmptyState,
        header::Header,
        history_graph::{GraphLine, HistoryGraph},
        join_link::JoinLink,
        notify_me::NotifyMe,
        status_pill::StatusPill,
        week_heatmap::WeekHeatmap,
    },
    history::{csv_link, peaks, percent, players, shares, step_ms, RangeLabels, TABS},
    i18n::{t, tf, K},
    list::lobby::{lobby_label, mode_label, players_label},
    query::ListQuery,
    route::Route,
    router::{link, use_router},
    services::{
        browser::{self, local_time, TimeStyle},
        metrics,
    },
    views::server::{use_server_view, Body, Dated, Details},
};

/// Props of [`ServerPage`] and [`EmbedServer`].
#[derive(Properties, PartialEq)]
pub struct ServerPageProps {
    pub server: ServerKey,
}

/// The full page, under the site's header.
#[component]
pub fn ServerPage(props: &ServerPageProps) -> Html {
    let router = use_router();
    let span = use_state_eq(|| HistoryRange::Day);
    let view = use_server_view(props.server, *span);
    // For the page benchmark: the first render with the record drawn.
    let drawn = matches!(view.body, Body::Shown(_));
    let timed = use_mut_ref(|| false);
    use_effect_with(view.arrived_perf_ms.filter(|_| drawn), move |arrived| {
        let done = timed.replace(true);
        match *arrived {
            Some(at) if !done => metrics::server_page_rendered(browser::perf_now() - at),
            // Not drawn yet: the next change of `arrived` is the one.
            None => {
                timed.replace(done);
            }
            Some(_) => {}
        }
    });
    let back = link(
        &router,
        Route::Home,
        classes!("back-link"),
        html! { t(K::AllServers) },
    );
    let main = match &view.body {
        Body::Loading => html! {
            <>
                <h1 aria-busy="true">{ t(K::LoadingServer) }</h1>
            </>
        },
        Body::Missing => html! {
            <>
                <h1 data-testid="server-missing">{ t(K::NoSuchServer) }</h1>
                <p>{ t(K::NoSuchServerDetail) }</p>
            </>
        },
        Body::Failed => html! {
            <>
                <h1>{ t(K::LoadingServer) }</h1>
                <EmptyState title={t(K::CantReach)} detail={t(K::ServerLoadFailed)} />
            </>
        },
        Body::Shown(d) => {
            let on_span = {
                let span = span.clone();
                Callback::from(move |s: HistoryRange| span.set(s))
            };
            html! {
                <>
                    <h1 dir="auto" data-testid="server-name">{ &d.name }</h1>
                    <section class="card" aria-label={t(K::ServerStatus)}>
                        { facts(d) }
                        <NotifyMe server={props.server} name={d.name.clone()} />
                    </section>
                    <section class="card" aria-labelledby="history-title">
                        <h2 id="history-title">{ t(K::History) }</h2>
                        { span_switch(*span, on_span) }
                        { history(&view.history, *span, d) }
                        <p>
                            <a href={csv_link(&format!("/api/servers/{}/history?range={}", props.server, span.as_str()))}
                                download="history.csv" data-testid="history-csv">
                                { t(K::DownloadCsv) }
                            </a>
                        </p>
                        <WeekHeatmap path={format!("/api/servers/{}/week", props.server)} testid="server-week"
                            recorded={view.recorded} />
                    </section>
                    <section class="card" aria-labelledby="embed-title">
                        <h2 id="embed-title">{ t(K::Embed) }</h2>
                        <EmbedSnippets server={props.server} name={d.name.clone()} />
                    </section>
                </>
            }
        }
    };
    html! {
        <>
            <Header />
            <main class="page server-page" data-testid="server-page">
                <p class="back">{ back }</p>
                { main }
            </main>
        </>
    }
}

/// The compact card for an iframe: name, state and the last 24 hours,
/// with a link to the full page; `theme=light|dark` as `/embed` has it.
#[component]
pub fn EmbedServer(props: &ServerPageProps) -> Html {
    let router = use_router();
    let theme = ListQuery::from_query_str(&router.location.query)
        .theme
        .map(|t| t.as_str());
    use_effect_with(theme, |theme| {
        browser::set_theme(*theme);
        || browser::set_theme(None)
    });
    let view = use_server_view(props.server, HistoryRange::Day);
    let page = Route::Server(props.server).path();
    let body = match &view.body {
        Body::Shown(d) => html! {
            <>
                <h1 dir="auto" data-testid="server-name">{ &d.name }</h1>
                { state_line(d) }
                <p><JoinLink href={d.join.clone()} owner={d.name.clone()} new_tab={true} /></p>
                { history(&view.history, HistoryRange::Day, d) }
            </>
        },
        Body::Missing => html! { <h1 data-testid="server-missing">{ t(K::NoSuchServer) }</h1> },
        _ => html! { <h1 aria-busy="true">{ t(K::LoadingServer) }</h1> },
    };
    html! {
        <main class="page embed embed-server" data-testid="server-page">
            <div class="embed-head">
                <span class="brand"><span class="brand-mark" aria-hidden="true">{"◆"}</span>{" Lobby"}</span>
                <StatusPill />
            </div>
            { body }
            <p><a href={page} target="_blank" rel="noopener">{ t(K::OpenInLobby) }</a></p>
        </main>
    }
}

/// Online or offline, players, lobby and mode, in one line.
fn state_line(d: &Details) -> Html {
    html! {
        <p class="state-line" data-testid="server-state">
            { online_badge(d) }
            <span class="players" data-testid="server-players">{ players_label(d.players.current, d.players.max) }</span>
            <span class={classes!("badge", if d.open { "open" } else { "ingame" })} data-testid="server-lobby">
                { lobby_label(d.open) }
            </span>
            <span>{ mode_label(d.mode) }</span>
        </p>
    }
}

fn online_badge(d: &Details) -> Html {
    html! {
        <span class={classes!("badge", if d.online { "open" } else { "down" })} data-testid="server-online">
            { t(if d.online { K::Online } else { K::Offline }) }
        </span>
    }
}

/// The details as a list of facts.
fn facts(d: &Details) -> Html {
    let seen = |ms: Option<f64>| ms.map(|ms| local_time(ms, TimeStyle::Full));
    let last = if d.listed {
        Some(t(K::SeenNow).to_owned())
    } else {
        seen(d.last_seen)
    };
    let fact = |label: K, value: Html| {
        html! {
            <div class="fact"><dt>{ t(label) }</dt><dd>{ value }</dd></div>
        }
    };
    html! {
        <>
            <dl class="facts">
                { fact(K::ServerStatus, online_badge(d)) }
                { fact(K::Players, html! {
                    <span class="players" data-testid="server-players">{ players_label(d.players.current, d.players.max) }</span>
                }) }
                { fact(K::Lobby, html! {
                    <span class={classes!("badge", if d.open { "open" } else { "ingame" })} data-testid="server-lobby">
                        { lobby_label(d.open) }
                    </span>
                }) }
                { fact(K::Mode, html! { mode_label(d.mode) }) }
                if d.address.is_some() {
                    { fact(K::Address, html! {
                        <span data-testid="server-address">
                            <CopyAddress address={d.address.clone()} owner={d.name.clone()} />
                            <JoinLink href={d.join.clone()} owner={d.name.clone()} />
                        </span>
                    }) }
                }
                if let Some(first) = seen(d.first_seen) {
                    { fact(K::FirstSeen, html! { first }) }
                }
                if let Some(last) = last {
                    { fact(K::LastSeen, html! { last }) }
                }
            </dl>
            if !d.online {
                <p class="muted">{ t(K::OfflineDetail) }</p>
            }
        </>
    }
}

/// The range buttons (a group of toggles: one is pressed).
fn span_switch(current: HistoryRange, on_span: Callback<HistoryRange>) -> Html {
    html! {
        <div class="spans" role="group" aria-label={t(K::HistoryRange)}>
            { for TABS.into_iter().map(|s| {
                let on_span = on_span.clone();
                html! {
                    <button type="button" class={classes!("span", (s == current).then_some("selected"))}
                        aria-pressed={(s == current).to_string()} data-span={s.as_str()}
                        onclick={Callback::from(move |_: MouseEvent| on_span.emit(s))}>
                        { t(s.label()) }
                    </button>
                }
            }) }
        </div>
    }
}

/// The shares over the range and the players' graph.
fn history(load: &Option<Dated<ServerHistory>>, span: HistoryRange, d: &Details) -> Html {
    let Some(Dated { value, at_ms }) = load else {
        return html! { <p class="muted graph-loading" aria-busy="true">{ t(K::LoadingHistory) }</p> };
    };
    let shares = shares(value).map(|(online, open)| {
        html! {
            <dl class="shares" aria-label={tf(K::SharesOver, &[&t(span.phrase())])}>
                <div class="fact"><dt>{ t(K::UptimeShare) }</dt><dd data-testid="uptime">{ percent(online) }</dd></div>
                <div class="fact"><dt>{ t(K::OpenShare) }</dt><dd data-testid="open-share">{ percent(open) }</dd></div>
            </dl>
        }
    });
    let lines = vec![
        GraphLine {
            series: Rc::new(players(value)),
            class: "players",
            what: t(K::AveragePlayers),
        },
        GraphLine {
            series: Rc::new(peaks(value)),
            class: "peak",
            what: t(K::PeakPlayers),
        },
    ];
    html! {
        <>
            { for shares }
            <ul class="legend" aria-hidden="true">
                <li class="players">{ t(K::AveragePlayers) }</li>
                <li class="peak">{ t(K::PeakPlayers) }</li>
            </ul>
            <HistoryGraph lines={lines} step_ms={step_ms(value.step)} span={span} to_ms={*at_ms}
                floor={f64::from(d.players.max)} testid="server-graph" />
        </>
    }
}
