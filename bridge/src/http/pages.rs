//! The pages as the bridge sends them (`docs/protocol.md` §2.6): the front
//! end's `index.html` with each page's own facts written into its head
//! (title, description, Open Graph, Twitter card), because chat apps and
//! search engines read the HTML without running its script; a 404 that
//! says so for a key never seen and for a path that is neither a page of
//! the app (`protocol::page::Route`, the page's own routes) nor a file of
//! the build; and `GET /join/{key}`, the Join link as a redirect.
//!
//! Each document is written once per change of the list, of the history
//! or of `index.html`, and kept in memory with its compressed forms. The
//! build's `index.html.br`/`.gz` twins hold the page without its facts, so
//! they cannot be served; compressing a few kilobytes at the fast levels
//! (`feed::ApiBody`) takes well under a millisecond once per change, and
//! serving the page uncompressed would cost every phone on a slow network
//! more than that. Writing one is paid from the client address's budget
//! (`crate::budget`), as an `/api/` answer is; serving a kept one is free.

use std::{
    fmt::Write as _,
    net::SocketAddr,
    sync::Arc,
    time::{Instant, SystemTime},
};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::{header, HeaderMap, HeaderValue, Method, StatusCode},
    response::{IntoResponse, Response},
};
use protocol::{page::Route, ServerKey};
use tower::ServiceExt;

use crate::{
    ctx::Ctx,
    http::{
        answers::if_none_match,
        api::encoded,
        assets::NO_CACHE,
        documents::{Document, Refused, Stamp, Written},
        error::Path,
        history_api::{list_seq, server_state},
        markup::escape,
        state::ServerState,
    },
};

/// The page's shell when the build has no `index.html` (a bridge serving
/// only the API): the facts still reach link previews.
const BARE_SHELL: &str = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n<title>Lobby</title>\n</head>\n<body></body>\n</html>\n";

/// The site's name in titles and previews.
const SITE: &str = "Lobby";

/// The lobby's title, as `index.html` has it.
const LOBBY_TITLE: &str = "Lobby · game servers";

/// What the lobby is, after its numbers.
const LOBBY_ABOUT: &str = "The game's servers live: players, open lobbies and modes.";

/// Every path no other route takes: a page of the app (its facts written
/// in), the admin's page and the build's files, or the 404 page.
pub(crate) async fn front(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let route = Route::from_path(req.uri().path());
    if matches!(route, Route::Admin | Route::NotFound) {
        let files = ctx.pages.files.clone();
        let headers = req.headers().clone();
        let readable = matches!(*req.method(), Method::GET | Method::HEAD);
        if route == Route::Admin && readable && ctx.join().is_some() {
            if let Some(res) = admin(&ctx, client, &headers).await {
                return res;
            }
        }
        let Ok(res) = files.oneshot(req).await;
        if route == Route::NotFound && res.status() == StatusCode::NOT_FOUND && readable {
            return page(&ctx, route, client, &headers).await;
        }
        return res;
    }
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, "GET, HEAD")],
        )
            .into_response();
    }
    page(&ctx, route, client, req.headers()).await
}

/// `GET /join/{key}`: `302` to the server's Join link; `409` with a page
/// that says so while it is offline; `404` for a key never seen, and for
/// every key without a template or while addresses are hidden.
pub(crate) async fn join(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    Path(key): Path<String>,
    headers: HeaderMap,
) -> Response {
    let (Some(template), Ok(key)) = (ctx.join().cloned(), key.parse::<ServerKey>()) else {
        return page(&ctx, Route::NotFound, client, &headers).await;
    };
    let stamp = stamp(&ctx).await;
    let worker = ctx.clone();
    let document = ctx
        .pages
        .document(
            format!("/join/{key}"),
            stamp,
            pay(&ctx, client),
            move || {
                let shell = read_shell(&worker);
                let state = match server_state(&worker, key) {
                    Ok(Some(state)) => state,
                    Ok(None) => return write(&worker, &shell, &Facts::not_seen()),
                    Err(_) => return write(&worker, &shell, &Facts::unavailable()),
                };
                let s = &state.sample;
                let link = match (&s.address, s.port, state.online) {
                    (Some(address), Some(port), true) => template.fill(address, port).ok(),
                    _ => None,
                };
                match link {
                    Some(link) => Written {
                        status: StatusCode::FOUND,
                        location: Some(link),
                        html: String::new(),
                    },
                    None => offline(key, &state),
                }
            },
        )
        .await;
    respond(document, &headers)
}

/// The page for `route` (its facts written in), as `headers` accept it.
async fn page(ctx: &Arc<Ctx>, route: Route, client: SocketAddr, headers: &HeaderMap) -> Response {
    let stamp = stamp(ctx).await;
    let worker = ctx.clone();
    let document = ctx
        .pages
        .document(route.path(), stamp, pay(ctx, client), move || {
            let shell = read_shell(&worker);
            write(&worker, &shell, &Facts::of(&worker, route))
        })
        .await;
    respond(document, headers)
}

/// The admin's page with the Join links' template written in, so its
/// rows show Join as the player's do (its title is its own: it is not
/// for link previews); `None` when the build has no admin page.
async fn admin(ctx: &Arc<Ctx>, client: SocketAddr, headers: &HeaderMap) -> Option<Response> {
    let stamp = Stamp {
        list: 0,
        history: 0,
        shell: Some(file_stamp(&ctx.pages.admin).await?),
    };
    let worker = ctx.clone();
    let document = ctx
        .pages
        .document("/admin".into(), stamp, pay(ctx, client), move || {
            let shell = std::fs::read_to_string(&worker.pages.admin).unwrap_or_default();
            Written {
                status: StatusCode::OK,
                location: None,
                html: with_in_head(&shell, &join_meta(&worker)),
            }
        })
        .await;
    Some(respond(document, headers))
}

/// The stamp of a document written now.
async fn stamp(ctx: &Ctx) -> Stamp {
    Stamp {
        list: list_seq(ctx),
        history: ctx.history.generation(),
        shell: file_stamp(&ctx.pages.shell).await,
    }
}

/// A file's modification time and size; `None` if it is no file.
async fn file_stamp(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    tokio::fs::metadata(path)
        .await
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
}

/// Spends one of `client`'s tokens (behind a trusted proxy, the address
/// it forwards) when a document must be written for it.
fn pay(ctx: &Ctx, client: SocketAddr) -> impl FnOnce() -> bool + '_ {
    move || ctx.budget.take(client.ip(), Instant::now())
}

fn read_shell(ctx: &Ctx) -> String {
    std::fs::read_to_string(&ctx.pages.shell).unwrap_or_else(|_| BARE_SHELL.to_owned())
}

fn respond(document: Result<Arc<Document>, Refused>, headers: &HeaderMap) -> Response {
    let d = match document {
        Ok(d) => d,
        Err(Refused::Unpaid) => {
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [
                    (header::RETRY_AFTER, "1"),
                    (header::CACHE_CONTROL, "no-store"),
                ],
                "too many requests\n",
            )
                .into_response()
        }
        Err(Refused::Failed) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    };
    let mut h = HeaderMap::new();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(NO_CACHE));
    if let Some(location) = &d.location {
        h.insert(header::LOCATION, location.clone());
        return (d.status, h).into_response();
    }
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if let Ok(etag) = HeaderValue::from_str(&d.etag) {
        h.insert(header::ETAG, etag);
    }
    if d.status == StatusCode::SERVICE_UNAVAILABLE {
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if d.status == StatusCode::OK && if_none_match(headers, &d.etag) {
        return (StatusCode::NOT_MODIFIED, h).into_response();
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    let body = encoded(headers, &d.body, &mut h);
    (d.status, h, body).into_response()
}

/// What a page's head says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Facts {
    status: StatusCode,
    /// `<title>`.
    title: String,
    description: String,
    /// The link preview; `None` for the pages that say something is not
    /// there (they are not for search engines either: `noindex`).
    preview: Option<Preview>,
}

/// Open Graph's and the Twitter card's facts beyond the description.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Preview {
    /// `og:title`.
    title: String,
    /// The page's own path (`og:url`).
    path: String,
    /// The card's path (`og:image`).
    image: String,
}

impl Facts {
    /// The facts of `route` now.
    fn of(ctx: &Ctx, route: Route) -> Self {
        match route {
            Route::Home | Route::Embed => Self::lobby(ctx, route),
            Route::Server(key) | Route::EmbedServer(key) => match server_state(ctx, key) {
                Ok(Some(state)) => Self::server(key, route, &state),
                Ok(None) => Self::not_seen(),
                Err(_) => Self::unavailable(),
            },
            Route::Admin | Route::NotFound => Self {
                status: StatusCode::NOT_FOUND,
                title: format!("Page not found · {SITE}"),
                description: "This lobby has no page at this address.".into(),
                preview: None,
            },
        }
    }

    /// The lobby: its servers and players now.
    fn lobby(ctx: &Ctx, route: Route) -> Self {
        let feed = ctx.upstream.current().feed;
        let description = match &feed {
            Some(feed) => {
                let (servers, players) = feed.list().servers().fold((0usize, 0u64), |(n, p), e| {
                    (n + 1, p + u64::from(e.stats.players.current))
                });
                format!(
                    "{} online, {} now. {LOBBY_ABOUT}",
                    counted(servers as u64, "server", "servers"),
                    counted(players, "player", "players"),
                )
            }
            None => LOBBY_ABOUT.to_owned(),
        };
        Self {
            status: StatusCode::OK,
            title: LOBBY_TITLE.into(),
            description,
            preview: Some(Preview {
                title: LOBBY_TITLE.into(),
                path: route.path(),
                image: "/card.png".into(),
            }),
        }
    }

    /// One server: its name, and its state as its badge says it.
    fn server(key: ServerKey, route: Route, state: &ServerState) -> Self {
        let s = &state.sample;
        let mode = protocol::GameplayMode::from_wire(u64::from(s.mode))
            .map(|m| format!(" · {}", m.label()))
            .unwrap_or_default();
        let players = format!("{}/{} players", s.players, s.max);
        let description = match (state.online, s.open) {
            (true, true) => format!("{players}, lobby open{mode}"),
            (true, false) => format!("{players}, in game{mode}"),
            (false, _) => format!("Offline (last seen with {players}){mode}"),
        };
        Self {
            status: StatusCode::OK,
            title: format!("{} · {SITE}", s.name),
            description,
            preview: Some(Preview {
                title: s.name.clone(),
                path: route.path(),
                image: format!("/card/{key}.png"),
            }),
        }
    }

    /// A key never seen: the page says so, as the app does.
    fn not_seen() -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            title: format!("No such server · {SITE}"),
            description: "This lobby has never listed a server with this key: the link may be mistyped or from another lobby.".into(),
            preview: None,
        }
    }

    /// While the history's database is unreachable (never kept).
    fn unavailable() -> Self {
        Self {
            status: StatusCode::SERVICE_UNAVAILABLE,
            title: LOBBY_TITLE.into(),
            description: "The lobby cannot look this server up right now; try again shortly."
                .into(),
            preview: None,
        }
    }
}

/// `n` and the noun for it.
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `shell` with `facts` (and the join template the page fills its rows'
/// Join links from) written into its head.
fn write(ctx: &Ctx, shell: &str, facts: &Facts) -> Written {
    let absolute = |path: &str| format!("{}{path}", ctx.config.public_url.as_deref().unwrap_or(""));
    let mut head = String::with_capacity(1024);
    let _ = write!(head, "<title>{}</title>", escape(&facts.title));
    let mut meta = |attr: &str, name: &str, content: &str| {
        let _ = write!(
            head,
            "\n    <meta {attr}=\"{name}\" content=\"{}\" />",
            escape(content)
        );
    };
    meta("name", "description", &facts.description);
    match &facts.preview {
        Some(p) => {
            let (url, image) = (absolute(&p.path), absolute(&p.image));
            meta("property", "og:type", "website");
            meta("property", "og:site_name", SITE);
            meta("property", "og:title", &p.title);
            meta("property", "og:description", &facts.description);
            meta("property", "og:url", &url);
            meta("property", "og:image", &image);
            meta("property", "og:image:width", "1200");
            meta("property", "og:image:height", "630");
            meta("name", "twitter:card", "summary_large_image");
            meta("name", "twitter:title", &p.title);
            meta("name", "twitter:description", &facts.description);
            meta("name", "twitter:image", &image);
        }
        None => meta("name", "robots", "noindex"),
    }
    head.push_str(&join_meta(ctx));
    Written {
        status: facts.status,
        location: None,
        html: with_head(shell, &head),
    }
}

/// The tag the page reads its Join links' template from (nothing
/// without Join).
fn join_meta(ctx: &Ctx) -> String {
    ctx.join().map_or_else(String::new, |template| {
        format!(
            "\n    <meta name=\"lobby-join-url\" content=\"{}\" />",
            escape(template.as_str())
        )
    })
}

/// `shell` with `tags` added at the end of its head (before `</head>`,
/// else after the doctype, else first).
fn with_in_head(shell: &str, tags: &str) -> String {
    let at = shell
        .find("</head>")
        .or_else(|| after_doctype(shell))
        .unwrap_or(0);
    [&shell[..at], tags, &shell[at..]].concat()
}

/// Where the doctype ends, if `shell` starts with one.
fn after_doctype(shell: &str) -> Option<usize> {
    let doctype = shell.get(..9)?.eq_ignore_ascii_case("<!doctype");
    doctype.then(|| shell.find('>').map(|end| end + 1))?
}

/// `shell` with its `<title>` element replaced by `head`; without one,
/// `head` goes before `</head>`, else after the doctype (never before it:
/// a browser would render the page in quirks mode), else first.
fn with_head(shell: &str, head: &str) -> String {
    let title = shell.find("<title>").and_then(|start| {
        let end = shell[start..].find("</title>")? + start + "</title>".len();
        Some((start, end))
    });
    let (start, end) = match (title, shell.find("</head>"), after_doctype(shell)) {
        (Some(range), _, _) => range,
        (None, Some(at), _) | (None, None, Some(at)) => (at, at),
        (None, None, None) => (0, 0),
    };
    let mut out = String::with_capacity(shell.len() + head.len());
    out.push_str(&shell[..start]);
    out.push_str(head);
    out.push_str(&shell[end..]);
    out
}

/// The `409` of `/join/{key}` while the server is offline: a small page of
/// its own that says so and links to the server's page.
fn offline(key: ServerKey, state: &ServerState) -> Written {
    let name = escape(&state.sample.name);
    let page = Route::Server(key).path();
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n<meta name=\"robots\" content=\"noindex\" />\n<title>{name} is offline · {SITE}</title>\n</head>\n<body>\n<main>\n<h1 dir=\"auto\">{name} is offline</h1>\n<p>The lobby does not list it now, so it cannot be joined. <a href=\"{page}\">Its page</a> says when it was last seen.</p>\n</main>\n</body>\n</html>\n"
    );
    Written {
        status: StatusCode::CONFLICT,
        location: None,
        html,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_replaces_the_title_or_goes_before_the_heads_end() {
        let shell = "<html><head><meta charset=\"utf-8\" /><title>Old</title><link rel=\"x\" /></head><body></body></html>";
        assert_eq!(
            with_head(shell, "<title>New</title>"),
            "<html><head><meta charset=\"utf-8\" /><title>New</title><link rel=\"x\" /></head><body></body></html>"
        );
        assert_eq!(
            with_head("<head></head>", "<title>New</title>"),
            "<head><title>New</title></head>"
        );
        assert_eq!(
            with_head("plain", "<title>T</title>"),
            "<title>T</title>plain"
        );
        assert_eq!(
            with_head("<!DOCTYPE html>body", "<title>T</title>"),
            "<!DOCTYPE html><title>T</title>body"
        );
        assert_eq!(
            with_in_head("<head><title>A</title></head>", "<m>"),
            "<head><title>A</title><m></head>"
        );
        assert_eq!(
            with_in_head("<!doctype html>x", "<m>"),
            "<!doctype html><m>x"
        );
        // An unclosed title is no title: the head goes before </head>.
        assert_eq!(
            with_head("<head><title>x</head>", "<i>"),
            "<head><title>x<i></head>"
        );
    }

    #[test]
    fn counts_read_as_words() {
        assert_eq!(counted(1, "server", "servers"), "1 server");
        assert_eq!(counted(0, "server", "servers"), "0 servers");
        assert_eq!(counted(12, "player", "players"), "12 players");
    }
}
