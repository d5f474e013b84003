//! The table of one source's servers: sortable headings and keyed rows.

use std::rc::Rc;

use yew::prelude::*;

use crate::{
    components::{
        copy_address::CopyAddress,
        list_table::{list_table, RowMarks, TableParts},
    },
    favourites::MarkAction,
    games::{address_label, ping_label, players_label, GameRow},
    i18n::{t, tf, K},
    list::ListRow,
    query::SortKey,
    views::table::TableView,
};

/// Props of [`GameTable`].
#[derive(Properties, PartialEq)]
pub struct GameTableProps {
    pub rows: Rc<Vec<GameRow>>,
    pub view: TableView,
    /// Opens a server's details (its key).
    pub on_open: Callback<Rc<str>>,
}

#[component]
pub fn GameTable(props: &GameTableProps) -> Html {
    let view = &props.view;
    let source = view.query.source.clone().unwrap_or_default();
    let parts = TableParts {
        class: Some("games"),
        caption: t(K::TableCaptionGames),
        columns: &SortKey::GAMES,
    };
    list_table(parts, view, &|i, marks| {
        let row = props.rows.get(i)?;
        Some(html! {
            <GameTableRow key={row.key.clone()} row={row.clone()} on_open={props.on_open.clone()}
                mark_key={row.mark_key(&source)} {marks}
                on_mark={view.on_mark.clone()} />
        })
    })
}

/// Props of [`GameTableRow`].
#[derive(Properties, PartialEq)]
pub struct GameTableRowProps {
    pub row: GameRow,
    pub on_open: Callback<Rc<str>>,
    #[prop_or_default]
    pub mark_key: String,
    #[prop_or_default]
    pub marks: RowMarks,
    /// Star and hide go here; without it the row has no such buttons.
    #[prop_or_default]
    pub on_mark: Option<Callback<MarkAction>>,
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
    let marks = props.marks;
    let (star, hide) = marks.buttons(
        props.on_mark.as_ref(),
        || props.mark_key.clone(),
        &row.title,
    );
    let class = classes!((!s.online).then_some("offline"), marks.classes());
    html! {
        <tr data-testid="game-row" data-name={row.title.to_string()}
            data-online={if s.online { "true" } else { "false" }} {class}
            data-favourite={marks.favourite.then_some("true")}>
            <th scope="row" class="c-name">
                { star }
                <button type="button" class="open-detail" dir="auto" {onclick}
                    aria-label={tf(K::DetailsOf, &[&row.title])}>{ row.title.to_string() }</button>
                if !s.online {
                    <span class="badge down" title={s.error.clone().unwrap_or_default()}>{ t(K::Offline) }</span>
                }
                if s.password == Some(true) {
                    <span class="badge lock" title={t(K::NeedsPassword)}>{ t(K::Password) }</span>
                }
                { marks.badge() }
                { hide }
            </th>
            <td class="c-game" data-label={t(K::Game)} dir="auto">{ &s.game }</td>
            <td class="c-map" data-label={t(K::Map)} dir="auto">{ &s.map }</td>
            <td class="c-players" data-label={t(K::Players)}>
                <span class={classes!("players", full.then_some("full"))}>{ players_label(s) }</span>
            </td>
            <td class="c-ping num" data-label={t(K::Ping)}>{ ping_label(s.ping_ms) }</td>
            <td class="c-addr" data-label={t(K::Address)}>
                <CopyAddress address={address_label(s)} owner={row.title.to_string()} />
            </td>
        </tr>
    }
}
