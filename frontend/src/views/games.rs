//! One source of other games' servers as its view shows it: the source's
//! rows filtered, sorted, pinned and paged as the query says, its summary
//! and banners, or the one server the query selects.

use std::rc::Rc;

use protocol::bridge::GameSourceKind;
use yew::prelude::*;

use crate::{
    contexts::{lobby::use_lobby, settings::use_settings},
    games::{self, GameRow},
    i18n::{t, K},
    list::{self, summarize, summary_text, Arranged},
    query::{ListQuery, SortKey},
    state::Conn,
    views::table::{use_favourites_seen, TableView},
};

/// One game source, ready to draw; `None` in [`GameView::source`] when the
/// bridge has not reported its sources yet or has no such source.
pub struct SourceView {
    pub kind: GameSourceKind,
    /// Why the source could not be queried, if it could not.
    pub error: Option<String>,
    /// A note about the listed servers (not a failure).
    pub note: Option<String>,
    /// The source's servers as rows.
    pub rows: Rc<Vec<GameRow>>,
    /// The rows to show, in order, with the marks' counts.
    pub arranged: Rc<Arranged>,
    /// The query's page of them, with the favourites not in the list.
    pub table: TableView,
    /// "N servers · N players · N online".
    pub summary: String,
    /// The server `server=` selects: `Some(None)` when it is not listed
    /// (any more).
    pub selected: Option<Option<GameRow>>,
}

/// What the games' part of the page shows.
pub struct GameView {
    /// The bridge reported its sources (it does only when it has some).
    pub reported: bool,
    pub conn: Conn,
    pub source: Option<SourceView>,
    /// When the sources arrived (wall clock), for "updated N s ago".
    pub at_ms: Option<f64>,
    /// Why the servers shown may be out of date, if they may.
    pub stale: Option<&'static str>,
}

/// The source `query.source` names, under `query`; `on_sort` goes to the
/// headings.
#[hook]
pub fn use_game_view(query: &ListQuery, on_sort: Callback<SortKey>) -> GameView {
    let lobby = use_lobby();
    let state = &*lobby.state;
    let settings = use_settings();
    let id = query.source.clone().unwrap_or_default();
    // Borrowed, not cloned: this renders on every lobby push too, and a
    // source may list hundreds of servers with their players and rules.
    let source = state
        .games
        .as_deref()
        .and_then(|g| games::find(&g.sources, &id));
    let rows = {
        let all = state.games.clone();
        use_memo((state.games_version, id.clone()), move |(_, id)| {
            all.as_deref()
                .and_then(|g| games::find(&g.sources, id))
                .map(games::rows)
                .unwrap_or_default()
        })
    };
    let filter_key = ListQuery {
        page: 0,
        server: None,
        ..query.clone()
    };
    let arranged: Rc<Arranged> = {
        let rows = rows.clone();
        let s = settings.clone();
        use_memo(
            (state.games_version, filter_key, settings.marks.version),
            move |(_, q, _)| {
                let source = q.source.as_deref().unwrap_or_default();
                list::arrange_rows(&rows, q, &s.marks, source)
            },
        )
    };
    use_favourites_seen(
        (state.games_version, settings.marks.version),
        arranged.present.clone(),
        state.games_at_ms,
        settings.on_mark(),
    );
    let source = source.map(|source| SourceView {
        kind: source.kind,
        error: source.error.clone(),
        note: source.note.clone(),
        table: TableView::new(
            &arranged,
            query,
            on_sort,
            &settings.marks,
            settings.on_mark(),
            (&id, true),
        ),
        summary: summary_text::<GameRow>(summarize(&rows)),
        selected: query
            .server
            .as_ref()
            .map(|key| rows.iter().find(|r| &*r.key == key.as_str()).cloned()),
        arranged,
        rows,
    });
    GameView {
        reported: state.games.is_some(),
        conn: state.conn,
        source,
        at_ms: state.games_at_ms,
        stale: state.disconnected().then_some(t(K::StaleGames)),
    }
}
