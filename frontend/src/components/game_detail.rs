//! One server of another game in full: what it runs, who plays (score and
//! time or ping) and its rules or status keys.

use protocol::bridge::GameSourceKind;
use yew::prelude::*;

use crate::{
    components::copy_address::CopyAddress,
    games::{
        address_label, duration_label, filter_rules, flag_label, join_link, ping_label,
        players_by_score, players_label, GameRow,
    },
    i18n::{t, tf, K},
};

/// Props of [`GameDetail`].
#[derive(Properties, PartialEq)]
pub struct GameDetailProps {
    pub row: GameRow,
    /// A2S servers report time on the server, GameAgent ones ping.
    pub kind: GameSourceKind,
    pub on_close: Callback<()>,
}

/// Replaces the table while open; focus moves to its heading so keyboard
/// and screen-reader users land on it.
#[component]
pub fn GameDetail(props: &GameDetailProps) -> Html {
    let row = &props.row;
    let s = &row.server;
    let heading = use_node_ref();
    {
        let heading = heading.clone();
        use_effect_with(row.key.clone(), move |_| {
            if let Some(h) = heading.cast::<web_sys::HtmlElement>() {
                let _ = h.focus();
            }
        });
    }
    let onclick = props.on_close.reform(|_: MouseEvent| ());
    let a2s = props.kind == GameSourceKind::A2s;
    let fact = |label: &'static str, value: Html| {
        html! { <div class="fact"><dt>{ label }</dt><dd>{ value }</dd></div> }
    };
    let text = |v: &str| -> Option<Html> {
        (!v.trim().is_empty()).then(|| html! { <span dir="auto">{ v.to_owned() }</span> })
    };
    let players = players_by_score(s);
    // The Ship also reports deaths and money.
    let deaths = players.iter().any(|p| p.deaths.is_some());
    let money = players.iter().any(|p| p.money.is_some());
    let rule_filter = use_state(String::new);
    let on_rule_filter = {
        let rule_filter = rule_filter.clone();
        Callback::from(move |e: InputEvent| {
            rule_filter.set(
                e.target_unchecked_into::<web_sys::HtmlInputElement>()
                    .value(),
            )
        })
    };
    let rules = filter_rules(&s.rules, &rule_filter);
    html! {
        <section class="detail card" data-testid="game-detail" aria-labelledby="detail-title">
            <button type="button" id="detail-close" class="back" {onclick}>{ t(K::AllServers) }</button>
            <h2 id="detail-title" tabindex="-1" ref={heading} dir="auto">{ row.title.to_string() }</h2>
            if !s.online {
                <p class="banner warn" role="status">
                    { tf(K::NotAnswering, &[&s.error.as_deref().unwrap_or(t(K::NoReply))]) }
                </p>
            }
            <dl class="facts">
                { fact(t(K::Address), html! { <CopyAddress address={address_label(s)} owner={row.title.to_string()} /> }) }
                { for text(&s.game).map(|v| fact(t(K::Game), v)) }
                { for text(&s.map).map(|v| fact(t(K::Map), v)) }
                { for text(&s.mode).map(|v| fact(t(K::Mode), v)) }
                { for text(&s.version).map(|v| fact(t(K::Version), v)) }
                if s.online {
                    { fact(t(K::Players), html! { players_label(s) }) }
                }
                { for flag_label(s.password, t(K::Yes), t(K::No)).map(|v| fact(t(K::Password), html! { v })) }
                { for flag_label(s.vac, t(K::Secured), t(K::Off)).map(|v| fact("VAC", html! { v })) }
                { fact(t(K::Ping), html! { ping_label(s.ping_ms) }) }
            </dl>
            if let Some(href) = join_link(props.kind, s) {
                <p><a class="join" {href}>{ t(K::JoinSteam) }</a></p>
            }
            <h3>{ tf(K::PlayersCount, &[&players.len()]) }</h3>
            if players.is_empty() {
                <p class="muted">{ t(if s.online { K::NoPlayers } else { K::UnknownOffline }) }</p>
            } else {
                <table class="detail-table players-table">
                    <thead><tr>
                        <th scope="col">{ t(K::Name) }</th>
                        <th scope="col" class="num">{ t(if a2s { K::Score } else { K::Frags }) }</th>
                        if deaths { <th scope="col" class="num">{ t(K::Deaths) }</th> }
                        if money { <th scope="col" class="num">{ t(K::Money) }</th> }
                        <th scope="col" class="num">{ t(if a2s { K::Time } else { K::Ping }) }</th>
                    </tr></thead>
                    <tbody>
                        { for players.iter().map(|p| html! {
                            <tr data-testid="detail-player" data-name={p.name.clone()}>
                                <th scope="row" dir="auto">
                                    if p.name.is_empty() { <span class="muted">{ t(K::NoName) }</span> } else { { p.name.clone() } }
                                </th>
                                <td class="c-score num">{ p.score }</td>
                                if deaths { <td class="c-deaths num">{ p.deaths.map_or_else(|| "—".to_owned(), |d| d.to_string()) }</td> }
                                if money { <td class="c-money num">{ p.money.map_or_else(|| "—".to_owned(), |m| m.to_string()) }</td> }
                                if a2s {
                                    <td class="c-time num">{ p.time_secs.map(duration_label).unwrap_or_else(|| "—".to_owned()) }</td>
                                } else {
                                    <td class="c-ping num">{ ping_label(p.ping_ms) }</td>
                                }
                            </tr>
                        }) }
                    </tbody>
                </table>
            }
            <div class="rules-head">
                <h3>{ tf(if a2s { K::RulesCount } else { K::StatusCount }, &[&s.rules.len()]) }</h3>
                if s.rules.len() > 1 {
                    <label>
                        <span class="visually-hidden">{ t(if a2s { K::FilterRules } else { K::FilterStatus }) }</span>
                        <input id="rule-filter" type="search" placeholder={t(K::FilterPlaceholder)}
                            autocomplete="off" spellcheck="false" value={(*rule_filter).clone()} oninput={on_rule_filter} />
                    </label>
                }
            </div>
            if s.rules.is_empty() {
                <p class="muted">{ t(if a2s { K::NoRules } else { K::NoStatusKeys }) }</p>
            } else if rules.is_empty() {
                <p class="muted" data-testid="no-rules">{ tf(K::NothingMatches, &[&rule_filter.trim()]) }</p>
            } else {
                <table class="detail-table rules-table">
                    <thead><tr><th scope="col">{ t(K::Name) }</th><th scope="col">{ t(K::Value) }</th></tr></thead>
                    <tbody>
                        { for rules.iter().map(|r| html! {
                            <tr data-testid="detail-rule" data-name={r.name.clone()}>
                                <th scope="row"><code>{ r.name.clone() }</code></th>
                                <td class="c-value" dir="auto">{ r.value.clone() }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            }
        </section>
    }
}
