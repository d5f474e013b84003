//! One server in the table (a card on narrow screens).

use yew::prelude::*;

use crate::{
    components::copy_address::CopyAddress,
    listing::{address_label, free_slots, lobby_label, mode_label, players_label, Row},
};

/// Props of [`ServerRow`]; equal props skip the re-render, so an update
/// only touches rows that changed.
#[derive(Properties, PartialEq)]
pub struct ServerRowProps {
    pub row: Row,
    /// `flash-a` / `flash-b` while the row is new or changed in this list
    /// (alternating so back-to-back changes restart the animation).
    pub flash: Option<&'static str>,
}

#[component]
pub fn ServerRow(props: &ServerRowProps) -> Html {
    let e = &props.row.entry;
    let p = e.stats.players;
    let queued = p.current > u32::from(p.max);
    let full = p.current >= u32::from(p.max);
    html! {
        <tr data-testid="server-row" data-name={e.name.clone()} class={classes!(props.flash)}>
            <th scope="row" class="c-name"><span dir="auto">{ &e.name }</span></th>
            <td class="c-players" data-label="Players">
                <span class={classes!("players", full.then_some("full"), queued.then_some("queued"))}>
                    { players_label(p.current, p.max) }
                </span>
            </td>
            <td class="c-free num" data-label="Free">{ free_slots(e).max(0) }</td>
            <td class="c-lobby" data-label="Lobby">
                <span class={classes!("badge", if e.stats.is_lobby_open { "open" } else { "ingame" })}>
                    { lobby_label(e.stats.is_lobby_open) }
                </span>
            </td>
            <td class="c-mode" data-label="Mode">{ mode_label(e.stats.gameplay_mode) }</td>
            <td class="c-addr" data-label="Address">
                <CopyAddress address={address_label(e)} owner={e.name.clone()} />
            </td>
        </tr>
    }
}
