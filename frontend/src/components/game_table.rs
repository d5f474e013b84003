//! The table of one source's servers: sortable headings and keyed rows.

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{copy_address::CopyAddress, sort_heading::sort_heading},
    games::{address_label, ping_label, players_label, GameRow},
    query::{ListQuery, SortKey},
};

/// Props of [`GameTable`].
#[derive(Properties, PartialEq)]
pub struct GameTableProps {
    pub rows: Rc<Vec<GameRow>>,
    /// Indices into `rows` to show, in order.
    pub shown: Rc<Vec<usize>>,
    pub query: ListQuery,
    pub on_sort: Callback<SortKey>,
    /// Opens a server's details (its key).
    pub on_open: Callback<Rc<str>>,
}

#[component]
pub fn GameTable(props: &GameTableProps) -> Html {
    let q = &props.query;
    html! {
        <table class="servers games">
            <caption class="visually-hidden">{"Game servers. Click a column heading to sort, a name for details."}</caption>
            <thead>
                <tr>
                    { for SortKey::GAMES.into_iter().map(|column| sort_heading(column, q, &props.on_sort)) }
                    <th scope="col" class="c-addr">{"Address"}</th>
                </tr>
            </thead>
            <tbody>
                { for props.shown.iter().filter_map(|&i| props.rows.get(i)).map(|row| html! {
                    <GameTableRow key={row.key.clone()} row={row.clone()} on_open={props.on_open.clone()} />
                }) }
            </tbody>
        </table>
    }
}

/// Props of [`GameTableRow`].
#[derive(Properties, PartialEq)]
pub struct GameTableRowProps {
    pub row: GameRow,
    pub on_open: Callback<Rc<str>>,
}

/// One server (a card on narrow screens); its name opens the details.
#[component]
pub fn GameTableRow(props: &GameTableRowProps) -> Html {
    let row = &props.row;
    let s = &row.server;
    let onclick = {
        let key = row.key.clone();
        let cb = props.on_open.clone();
        Callback::from(move |_: MouseEvent| cb.emit(key.clone()))
    };
    let full = s.max_players > 0 && s.players >= s.max_players;
    html! {
        <tr data-testid="game-row" data-name={row.title.to_string()}
            data-online={if s.online { "true" } else { "false" }} class={classes!((!s.online).then_some("offline"))}>
            <th scope="row" class="c-name">
                <button type="button" class="open-detail" dir="auto" {onclick}
                    aria-label={format!("Details of {}", row.title)}>{ row.title.to_string() }</button>
                if !s.online {
                    <span class="badge down" title={s.error.clone().unwrap_or_default()}>{"Offline"}</span>
                }
                if s.password == Some(true) {
                    <span class="badge lock" title="Needs a password">{"Password"}</span>
                }
            </th>
            <td class="c-game" data-label="Game" dir="auto">{ &s.game }</td>
            <td class="c-map" data-label="Map" dir="auto">{ &s.map }</td>
            <td class="c-players" data-label="Players">
                <span class={classes!("players", full.then_some("full"))}>{ players_label(s) }</span>
            </td>
            <td class="c-ping num" data-label="Ping">{ ping_label(s.ping_ms) }</td>
            <td class="c-addr" data-label="Address">
                <CopyAddress address={address_label(s)} owner={row.title.to_string()} />
            </td>
        </tr>
    }
}
