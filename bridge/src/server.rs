//! The HTTP side: routes (`/ws`, `/healthz`, `/metrics`, the front end),
//! the checks made before a WebSocket upgrade, and graceful shutdown.

use std::{future::Future, net::SocketAddr, sync::Arc};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
    Extension, Router,
};
use hyper_util::rt::TokioIo;
use protocol::bridge::MasterState;
use tokio::{net::TcpListener, sync::Semaphore};
use tokio_tungstenite::tungstenite::{handshake::derive_accept_key, protocol::WebSocketConfig};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{debug, info, warn};

use crate::{
    api,
    config::{Config, MAX_WS_MESSAGE, WS_FRAGMENT},
    error::Error,
    games::Games,
    http,
    metrics::Metrics,
    origin::origin_allowed,
    session::{self, AuthGuard, Handle, Settings},
    upstream::{Source, Upstream},
};

/// What every request handler and session shares.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub(crate) config: Config,
    pub(crate) upstream: Arc<Upstream>,
    /// Where the list comes from: the embedded master or a remote one.
    pub(crate) source: Source,
    /// Other games' servers; `None` unless `--a2s`/`--gameagent-master`.
    pub(crate) games: Option<Arc<Games>>,
    pub(crate) metrics: Arc<Metrics>,
    /// Fires on shutdown: sessions close with 1001.
    pub(crate) cancel: CancellationToken,
    /// Open WebSocket sessions, so shutdown can wait for them.
    pub(crate) sessions: TaskTracker,
    /// One permit per open WebSocket (`max_connections`).
    pub(crate) slots: Arc<Semaphore>,
    /// What each WebSocket session gets of the above.
    pub(crate) session: Arc<Handle>,
}

/// A bridge: configuration plus shared state. Build it, keep
/// [`Bridge::metrics`] if you want to look inside, then [`Bridge::run`].
#[derive(Debug)]
pub struct Bridge {
    ctx: Arc<Ctx>,
}

impl Bridge {
    /// A bridge that does nothing until [`Bridge::run`].
    pub fn new(config: Config) -> Self {
        Self::build(config, None)
    }

    /// A bridge in front of a master running in the same process: it
    /// learns every change of `registry` at once instead of polling
    /// (`config.master` still names the master's TCP address, where admins'
    /// test servers register).
    pub fn embedding(config: Config, registry: Arc<master::Registry>) -> Self {
        Self::build(config, Some(registry))
    }

    fn build(config: Config, embedded: Option<Arc<master::Registry>>) -> Self {
        let metrics = Arc::new(Metrics::default());
        let upstream = Arc::new(Upstream::new(config.hide_addresses, metrics.clone()));
        let source = match embedded {
            Some(registry) => Source::Embedded(registry),
            None => Source::remote(&config),
        };
        let slots = Arc::new(Semaphore::new(config.max_connections));
        let games = Games::from_config(&config).map(Arc::new);
        let cancel = CancellationToken::new();
        let session = Arc::new(Handle {
            config: Settings::from(&config),
            shared: upstream.subscribe(),
            games: games.as_ref().map(|g| g.subscribe()),
            offer_list: source.offer_list(&upstream),
            metrics: metrics.clone(),
            auth: AuthGuard::new(config.auth_max_failures, config.auth_window),
            cancel: cancel.clone(),
        });
        Self {
            ctx: Arc::new(Ctx {
                config,
                upstream,
                source,
                games,
                metrics,
                cancel,
                sessions: TaskTracker::new(),
                slots,
                session,
            }),
        }
    }

    /// The live counters, as `/metrics` shows them.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.ctx.metrics.clone()
    }

    /// Serves `listener` until `shutdown` resolves; then stops accepting,
    /// closes every WebSocket with 1001 and the master connections, and
    /// returns within the configured grace time. A configuration that
    /// [`Config::validate`] refuses is an error before anything starts.
    pub async fn run(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), Error> {
        let ctx = &self.ctx;
        ctx.config.validate()?;
        let index = ctx.config.static_dir.join("index.html");
        if !index.is_file() {
            warn!(path = %index.display(), "no front end found; only /ws, /healthz and /metrics work");
        }
        let poller = tokio::spawn(ctx.source.clone().feed(
            ctx.upstream.clone(),
            ctx.config.clone(),
            ctx.cancel.child_token(),
        ));
        let games = ctx
            .games
            .clone()
            .map(|games| tokio::spawn(games.run(ctx.config.clone(), ctx.cancel.child_token())));
        let serve = http::serve(
            listener,
            router(ctx.clone()),
            http::Limits::new(&ctx.config, ctx.metrics.clone()),
            ctx.cancel.clone(),
        );
        tokio::pin!(serve);
        tokio::pin!(shutdown);
        let served = tokio::select! {
            () = &mut serve => true,
            () = &mut shutdown => false,
        };
        info!("bridge shutting down: closing WebSockets");
        ctx.cancel.cancel();
        ctx.sessions.close();
        let grace = ctx.config.shutdown_grace;
        let drained = tokio::time::timeout(grace, async {
            ctx.sessions.wait().await;
            if !served {
                // Idle HTTP connections close; open requests finish.
                let _ = (&mut serve).await;
            }
        })
        .await;
        if drained.is_err() {
            warn!("some connections did not close within the grace time");
        }
        poller.abort();
        if let Some(games) = games {
            games.abort();
        }
        Ok(())
    }
}

/// Runs a bridge with `config` on `listener` until `shutdown` resolves.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<(), Error> {
    Bridge::new(config).run(listener, shutdown).await
}

fn router(ctx: Arc<Ctx>) -> Router {
    // Precompressed files; client-side routes (/admin, /embed) get the page.
    let front_end = crate::assets::router(&ctx.config.static_dir);
    Router::new()
        .route("/ws", get(ws))
        .route("/healthz", get(healthz))
        .route("/api/servers", get(api::servers).options(api::preflight))
        .route("/metrics", get(metrics))
        .with_state(ctx)
        .merge(front_end)
}

async fn ws(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(client): Extension<http::Client>,
    mut req: Request,
) -> Response {
    // The upgrade is done here rather than with axum's `WebSocketUpgrade`:
    // its socket hides tungstenite's frames, and large lists must go out
    // fragmented (see `session::outbox`) or every subscriber's write buffer
    // grows to the largest list ever pushed.
    let headers = req.headers();
    let key = match upgrade_key(headers) {
        Ok(key) => key,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    if !origin_allowed(
        origin,
        host,
        &ctx.config.allowed_origins,
        ctx.config.loopback_origins,
    ) {
        ctx.metrics
            .refused_origin
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        info!(%peer, origin = origin.unwrap_or_default(), "upgrade from a foreign origin refused");
        return (StatusCode::FORBIDDEN, "origin not allowed\n").into_response();
    }
    if ctx.cancel.is_cancelled() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    let Ok(accept) = HeaderValue::from_str(&derive_accept_key(key.as_bytes())) else {
        return (StatusCode::BAD_REQUEST, "bad Sec-WebSocket-Key\n").into_response();
    };
    let Some(address_slot) = client.ws_slot() else {
        ctx.metrics
            .refused_ws_address
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        debug!(%peer, "WebSocket limit of this address reached; upgrade refused");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many connections from your address\n",
        )
            .into_response();
    };
    let Ok(permit) = ctx.slots.clone().try_acquire_owned() else {
        ctx.metrics
            .refused_full
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        warn!(%peer, "connection limit reached; upgrade refused");
        return (StatusCode::SERVICE_UNAVAILABLE, "too many connections\n").into_response();
    };
    let upgrade = hyper::upgrade::on(&mut req);
    let handle = ctx.session.clone();
    ctx.sessions.spawn(async move {
        match upgrade.await {
            Ok(upgraded) => {
                session::run(handle, peer, TokioIo::new(upgraded), ws_config()).await;
            }
            Err(e) => debug!(%peer, error = %e, "websocket upgrade failed"),
        }
        drop((permit, address_slot));
    });
    (
        StatusCode::SWITCHING_PROTOCOLS,
        [
            (header::CONNECTION, HeaderValue::from_static("upgrade")),
            (header::UPGRADE, HeaderValue::from_static("websocket")),
            (header::SEC_WEBSOCKET_ACCEPT, accept),
        ],
    )
        .into_response()
}

/// The WebSocket settings of every browser connection.
fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_WS_MESSAGE))
        .max_frame_size(Some(MAX_WS_MESSAGE))
        .read_buffer_size(4096)
        // Messages are written at each flush (once per event a session
        // handles: see `session::outbox`). Large
        // messages leave in fragments of `WS_FRAGMENT`, so the write
        // buffer stays about this size plus one fragment.
        .write_buffer_size(WS_FRAGMENT)
        .max_write_buffer_size(16 << 20)
}

/// The `Sec-WebSocket-Key` of a valid WebSocket upgrade request, or why
/// the request is not one.
fn upgrade_key(headers: &HeaderMap) -> Result<String, &'static str> {
    let has_token = |name: header::HeaderName, token: &str| {
        headers.get_all(name).iter().any(|v| {
            v.to_str()
                .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        })
    };
    if !has_token(header::CONNECTION, "upgrade") {
        return Err("Connection header did not include 'upgrade'\n");
    }
    if !has_token(header::UPGRADE, "websocket") {
        return Err("`Upgrade` header did not include 'websocket'\n");
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|v| v.as_bytes() != b"13")
    {
        return Err("`Sec-WebSocket-Version` header did not include '13'\n");
    }
    match headers
        .get(header::SEC_WEBSOCKET_KEY)
        .and_then(|v| v.to_str().ok())
    {
        Some(key) if !key.trim().is_empty() => Ok(key.trim().to_owned()),
        _ => Err("`Sec-WebSocket-Key` header missing\n"),
    }
}

async fn healthz(State(ctx): State<Arc<Ctx>>) -> Response {
    let shared = ctx.upstream.current();
    let (status, body) = match shared.master {
        MasterState::Up => (
            StatusCode::OK,
            serde_json::json!({"status": "ok", "master": "up"}),
        ),
        MasterState::Down => (
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({
                "status": "unavailable",
                "master": "down",
                "reason": shared.reason.as_deref().unwrap_or("the master cannot be reached"),
            }),
        ),
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn metrics(State(ctx): State<Arc<Ctx>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        ctx.metrics.render(),
    )
        .into_response()
}
