//! The lobby's own servers: filters, summary, table, empty states and
//! paging for the master's list, drawn from its view model
//! (`views::lobby`).

use yew::prelude::*;

use crate::{
    components::{
        browser_chrome::{empty_before_list, filter_note, list_meta, no_match, ViewCallbacks},
        empty_state::EmptyState,
        filters::Filters,
        pager::Pager,
        server_table::ServerTable,
    },
    contexts::settings::use_settings,
    i18n::{t, K},
    query::ListQuery,
    services::metrics::use_render_timing,
    views::lobby::{use_lobby_view, Body},
};

/// Props of [`LobbyList`].
#[derive(Properties, PartialEq)]
pub struct LobbyListProps {
    pub query: ListQuery,
    /// Receives the new view (written to the URL by the parent).
    pub on_change: Callback<ListQuery>,
    /// Compact mode for the iframe: no filter bar.
    #[prop_or_default]
    pub embed: bool,
    /// Told once a list is drawn whole.
    #[prop_or_default]
    pub on_drawn: Callback<()>,
}

/// The master's list, filtered, sorted and paged as `query` says.
#[component]
pub fn LobbyList(props: &LobbyListProps) -> Html {
    let query = props.query.clone();
    let set_query = props.on_change.clone();
    let ViewCallbacks {
        on_sort,
        on_page,
        clear_filters,
    } = ViewCallbacks::new(&query, &set_query);
    let view = use_lobby_view(&query, on_sort);
    // For benchmarks and tests: when this list version is drawn whole.
    use_render_timing(
        view.shown.version(),
        view.shown.rows().len(),
        view.table.complete(),
    );
    {
        let on_drawn = props.on_drawn.clone();
        use_effect_with(view.has_list && view.table.complete(), move |&drawn| {
            if drawn {
                on_drawn.emit(());
            }
        });
    }
    let settings = use_settings();

    let note = if view.has_list {
        filter_note(
            &view.arranged,
            clear_filters.clone(),
            &settings.on_mark(),
            settings.marks.show_hidden,
        )
    } else {
        html! {}
    };
    let (page, pages) = (view.table.page, view.table.pages);
    let drawn = view.table.complete();
    let body = match view.body {
        Body::Table => html! {
            <ServerTable shown={view.shown} view={view.table} new_keys={view.new_keys} />
        },
        Body::BeforeList(conn) => empty_before_list(conn),
        Body::NoServers => html! {
            <EmptyState title={t(K::NoServersOnline)}
                detail={t(K::NoServersOnlineDetail)} />
        },
        Body::NoMatch => no_match(clear_filters),
    };
    html! {
        <>
            if !props.embed {
                <Filters query={query.clone()} on_change={set_query.clone()} />
            }
            { list_meta(view.summary, note, view.at_ms, view.stale, view.error.as_deref()) }
            <div class="table-wrap">{ body }</div>
            // Under the rows: once they are all drawn, or they would push it.
            if drawn {
                <Pager page={page} pages={pages} on_page={on_page} />
            }
        </>
    }
}
