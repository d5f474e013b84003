//! One server of the lobby's table (a card on narrow screens), with its
//! star and hide buttons; its name links to the server's page.

use yew::prelude::*;

use crate::components::icon::{Icon, SvgIcon};

use crate::{
    components::{copy_address::CopyAddress, join_link::JoinLink, list_table::RowMarks},
    favourites::MarkAction,
    i18n::{t, tf, K},
    list::{
        free_slots,
        lobby::{
            address_label, join_link, lobby_label, mode_label, players_label, Row, LOBBY_SOURCE,
        },
        ListRow,
    },
    route::Route,
    router::{labelled_link, link, Router},
    services::browser,
};

/// The row's name: a link to the server's page when the bridge gave its
/// key (in the app, without a reload; from the embed, in a new tab, since
/// the iframe is a small part of another site).
fn name_cell(row: &Row, router: Option<&Router>) -> Html {
    let name = html! { <span dir="auto">{ &row.entry.name }</span> };
    match (row.server, router) {
        (Some(k), Some(r)) if r.location.route() != Route::Embed => {
            link(r, Route::Server(k), classes!("row-link"), name)
        }
        (Some(k), _) => html! {
            <a class="row-link" href={Route::Server(k).path()} target="_blank" rel="noopener">{ name }</a>
        },
        (None, _) => name,
    }
}

/// A favourite's way to "Notify me": a bell to its page, where the
/// control is (not in the embed, which is another site's).
fn notify_link(row: &Row, router: Option<&Router>) -> Html {
    match (row.server, router) {
        (Some(k), Some(r)) if r.location.route() != Route::Embed => {
            let label = tf(K::NotifyMeAbout, &[&row.entry.name]);
            let bell = html! { <SvgIcon icon={Icon::Bell} /> };
            labelled_link(
                r,
                Route::Server(k),
                classes!("notify-link"),
                Some(label),
                bell,
            )
        }
        _ => html! {},
    }
}

/// Props of [`ServerRow`]; equal props skip the re-render, so an update
/// only touches rows that changed.
#[derive(Properties, PartialEq)]
pub struct ServerRowProps {
    pub row: Row,
    /// `flash-a` / `flash-b` while the row is new or changed in this list
    /// (alternating so back-to-back changes restart the animation).
    pub flash: Option<&'static str>,
    #[prop_or_default]
    pub marks: RowMarks,
    /// Appeared a moment ago.
    #[prop_or_default]
    pub new: bool,
    /// Star and hide go here; without it the row has no such buttons.
    #[prop_or_default]
    pub on_mark: Option<Callback<MarkAction>>,
}

#[component]
pub fn ServerRow(props: &ServerRowProps) -> Html {
    let e = &props.row.entry;
    let p = e.stats.players;
    let queued = p.current > u32::from(p.max);
    let full = p.current >= u32::from(p.max);
    let marks = props.marks;
    let (star, hide) = marks.buttons(
        props.on_mark.as_ref(),
        || props.row.mark_key(LOBBY_SOURCE),
        &e.name,
    );
    let class = classes!(props.flash, marks.classes());
    let router = use_context::<Router>();
    let embedded = router
        .as_ref()
        .is_none_or(|r| r.location.route() == Route::Embed);
    let join = join_link(browser::join_template().as_ref(), e);
    html! {
        <tr data-testid="server-row" data-name={e.name.clone()} {class}
            data-favourite={marks.favourite.then_some("true")}>
            <th scope="row" class="c-name">
                { star }
                { name_cell(&props.row, router.as_ref()) }
                if marks.favourite {
                    { notify_link(&props.row, router.as_ref()) }
                }
                if props.new {
                    <span class="badge new" data-testid="new">{ t(K::New) }</span>
                }
                { marks.badge() }
                { hide }
            </th>
            <td class="c-players" data-label={t(K::Players)}>
                <span class={classes!("players", full.then_some("full"), queued.then_some("queued"))}>
                    { players_label(p.current, p.max) }
                </span>
            </td>
            <td class="c-free num" data-label={t(K::Free)}>{ free_slots(&props.row).max(0) }</td>
            <td class="c-lobby" data-label={t(K::Lobby)}>
                <span class={classes!("badge", if e.stats.is_lobby_open { "open" } else { "ingame" })}>
                    { lobby_label(e.stats.is_lobby_open) }
                </span>
            </td>
            <td class="c-mode" data-label={t(K::Mode)}>{ mode_label(e.stats.gameplay_mode) }</td>
            <td class="c-addr" data-label={t(K::Address)}>
                <CopyAddress address={address_label(e)} owner={e.name.clone()} />
                <JoinLink href={join} owner={e.name.clone()} new_tab={embedded} />
            </td>
        </tr>
    }
}
