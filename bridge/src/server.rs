//! The HTTP side: routes (`/ws`, `/healthz`, `/metrics`, the front end),
//! the checks made before a WebSocket upgrade, and graceful shutdown.

use std::{
    future::Future,
    net::SocketAddr,
    sync::{atomic::Ordering::Relaxed, Arc, Mutex},
};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    middleware,
    response::{IntoResponse, Response},
    routing::{any, get, put, MethodRouter},
    Extension, Router,
};
use hyper_util::rt::TokioIo;
use master::{
    logtext::{cut, cut_bytes},
    throttled,
};
use protocol::bridge::MasterState;
use tokio::{net::TcpListener, sync::Semaphore};
use tokio_tungstenite::tungstenite::{handshake::derive_accept_key, protocol::WebSocketConfig};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{debug, info, warn};

use crate::{
    budget::Budget,
    config::{Config, MAX_WS_MESSAGE, WS_FRAGMENT},
    ctx::Ctx,
    db::history::History,
    error::Error,
    http,
    http::{
        answers::Answers, api, badge, documents::Pages, history_api, origin::origin_header_allowed,
        pages,
    },
    live::{
        games::Games,
        keys::Keys,
        session::{self, AuthGuard, Handle, Settings},
        upstream::{Source, Upstream},
    },
    metrics::Metrics,
    notify::{
        channel::Channel,
        engine::{Counters, Notify},
        push::{self, Push},
        watch::Events,
        webhooks::{self, Webhooks},
    },
    visibility::Visibility,
};

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
        let visibility = Visibility::new(config.hide_addresses);
        let (keys, history, provisional_secret, mut start_error) = match open_data(&config) {
            Ok((keys, history, provisional)) => (keys, Some(Arc::new(history)), provisional, None),
            // Keys nobody sees: `run` refuses to start.
            Err(e) => (Keys::from_secret(b""), None, None, Some(e)),
        };
        let counters = Arc::new(Counters::default());
        let webhooks = history.as_ref().and_then(|history| {
            match open_webhooks(&config, visibility, history.clone(), counters.clone()) {
                Ok(webhooks) => Some(Arc::new(webhooks)),
                Err(e) => {
                    start_error.get_or_insert(e);
                    None
                }
            }
        });
        let push = history.as_ref().and_then(|history| {
            match open_push(&config, visibility, history.clone()) {
                Ok(push) => Some(Arc::new(push)),
                Err(e) => {
                    start_error.get_or_insert(e);
                    None
                }
            }
        });
        let notify = match (&history, &webhooks, &push) {
            (Some(history), Some(webhooks), Some(push)) => Some(Arc::new(Notify::new(
                history.clone(),
                vec![
                    webhooks.clone() as Arc<dyn Channel>,
                    push.clone() as Arc<dyn Channel>,
                ],
                counters,
            ))),
            _ => None,
        };
        let upstream = Arc::new(Upstream::new(visibility, metrics.clone(), keys));
        if let Some(webhooks) = &webhooks {
            webhooks.show_list(upstream.subscribe());
        }
        let source = Source::new(&upstream, embedded, &config);
        let slots = Arc::new(Semaphore::new(config.max_connections));
        let games = Games::from_config(&config, visibility).map(Arc::new);
        let cancel = CancellationToken::new();
        let budget = Arc::new(Budget::new(config.api_rate_per_sec, config.api_burst));
        let events = Arc::new(Events::new(config.offline_after).with_history(history.clone()));
        let config_static_dir = config.static_dir.clone();
        let session = Arc::new(Handle {
            config: Settings::new(&config, visibility),
            shared: upstream.subscribe(),
            games: games.as_ref().map(|g| g.subscribe()),
            upstream: upstream.clone(),
            metrics: metrics.clone(),
            auth: AuthGuard::new(config.auth_max_failures, config.auth_window)
                .with_total(config.auth_max_failures_total),
            budget: budget.clone(),
            cancel: cancel.clone(),
        });
        Self {
            ctx: Arc::new(Ctx {
                config,
                upstream,
                source,
                games,
                metrics,
                budget,
                cancel,
                sessions: TaskTracker::new(),
                slots,
                session,
                history,
                answers: Answers::default(),
                cards: crate::http::card::Rendered::default(),
                visibility,
                events,
                webhooks,
                push,
                provisional_secret,
                notify,
                start_error: Mutex::new(start_error),
                pages: Pages::new(&config_static_dir),
            }),
        }
    }

    /// Whether the bridge can start: the data directory, its key secret
    /// and its history database are usable (`run` checks it too). The
    /// error is returned once.
    pub fn check(&self) -> Result<(), Error> {
        let taken = self
            .ctx
            .start_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let ctx = &self.ctx;
        match (taken, &ctx.history, &ctx.webhooks, &ctx.push) {
            (Some(e), _, _, _) => Err(e),
            (None, Some(_), Some(_), Some(_)) => Ok(()),
            (None, _, _, _) => Err(Error::DataDirUnusable),
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
        self.check()?;
        let index = ctx.config.static_dir.join("index.html");
        if !index.is_file() {
            warn!(path = %index.display(), "no front end found; only /ws, /healthz and /metrics work");
        }
        let poller = tokio::spawn(ctx.source.clone().run(ctx.cancel.child_token()));
        let games = ctx
            .games
            .clone()
            .map(|games| tokio::spawn(games.run(ctx.config.clone(), ctx.cancel.child_token())));
        let recorder = ctx.history.clone().map(|history| {
            tokio::spawn(history.record(ctx.upstream.clone(), ctx.cancel.child_token()))
        });
        // Events and their notifications: off the list's publishing path
        // (their own watch receiver, their own tasks).
        let notifier = ctx.notify.clone().map(|notify| {
            tokio::spawn(notify.run(ctx.events.subscribe(), ctx.cancel.child_token()))
        });
        // Subscriptions not renewed in time are deleted; the task ends with
        // the others at shutdown.
        if let Some(push) = ctx.push.clone() {
            tokio::spawn(push.sweep(ctx.cancel.child_token()));
        }
        let watcher = tokio::spawn(
            ctx.events
                .clone()
                .run(ctx.upstream.clone(), ctx.cancel.child_token()),
        );
        let serve = http::accept::serve(
            listener,
            router(ctx.clone()),
            http::limits::Limits::new(&ctx.config, ctx.metrics.clone()),
            ctx.cancel.clone(),
        );
        // Keyed while the database was unreachable: checked once it answers.
        let keyed = {
            let (done, cancel) = (tokio::sync::oneshot::channel(), ctx.cancel.clone());
            let (tx, rx) = done;
            if let (Some(secret), Some(history)) = (ctx.provisional_secret, ctx.history.clone()) {
                let dir = ctx.config.data_dir.clone();
                let spawned =
                    std::thread::Builder::new()
                        .name("key-secret".into())
                        .spawn(move || {
                            let _ =
                                tx.send(reconcile_keys(&history, dir.as_deref(), secret, &cancel));
                        });
                if let Err(e) = spawned {
                    warn!(error = %e, "cannot start the thread that checks the key secret");
                }
            }
            rx
        };
        tokio::pin!(serve);
        tokio::pin!(shutdown);
        tokio::pin!(keyed);
        let mut failed = None;
        let served = tokio::select! {
            () = &mut serve => true,
            () = &mut shutdown => false,
            Ok(Err(e)) = &mut keyed => {
                tracing::error!(error = %e, "stopping: the database's key secret is another than the one this bridge keyed the list with at start; it is this bridge's copy now, and a new start keys with it");
                failed = Some(e);
                false
            }
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
        watcher.abort();
        if let Some(notifier) = notifier {
            let _ = tokio::time::timeout(grace, notifier).await;
        }
        if let Some(recorder) = recorder {
            recorder.abort();
        }
        if let Some(games) = games {
            games.abort();
        }
        failed.map_or(Ok(()), Err)
    }
}

/// The key secret and the history in `config.data_dir` (created if
/// missing), or a random secret and a history in memory without one.
/// The third part: the secret the list is keyed with until the database
/// answers (it was unreachable at start), to be checked then.
fn open_data(config: &Config) -> Result<(Keys, History, Option<[u8; 32]>), Error> {
    let interval = config.history_interval;
    let per_source = config.history_keys_per_source;
    if let Some(dir) = &config.data_dir {
        create_private_dir(dir).map_err(|source| Error::DataDir {
            path: dir.clone(),
            source,
        })?;
    }
    if let Some(url) = &config.database_url {
        if config.history_max_bytes.is_some() {
            return Err(Error::Database {
                path: url.to_string().into(),
                reason: "--history-max-bytes caps the embedded database only; size a PostgreSQL database with its own limits".into(),
            });
        }
        let history = History::connect(url, interval).with_keys_per_source(per_source);
        // The client blocks (on a runtime of its own): off this thread,
        // which may be the server's runtime.
        let (keys, provisional) = std::thread::scope(|s| {
            s.spawn(|| shared_keys(&history, config.data_dir.as_deref()))
                .join()
                .unwrap_or(Err(Error::DataDirUnusable))
        })?;
        return Ok((keys, history, provisional));
    }
    let Some(dir) = &config.data_dir else {
        let history = History::open(None, interval)?.with_keys_per_source(per_source);
        return Ok((Keys::ephemeral()?, history, None));
    };
    let keys = Keys::open(dir)?;
    let history = History::open(Some(dir), interval)?.with_keys_per_source(per_source);
    if let Some(max) = config.history_max_bytes {
        let applied = history.cap(max).map_err(|e| Error::Database {
            path: dir.join(crate::db::store::DB_FILE),
            reason: format!("cannot cap it at {max} bytes: {e}"),
        })?;
        info!(
            cap = applied,
            "the history database is capped (--history-max-bytes)"
        );
    }
    Ok((keys, history, None))
}

/// The key secret of the bridges on `history`'s database: created there
/// once (this bridge's file proposes it, so a bridge that grows from the
/// embedded database keeps its keys), and kept in `dir` as a copy. One try
/// at start (a refused password or connection fails at once, an address
/// that does not answer within the connect timeout); while the database
/// is unreachable the list is keyed at once with the copy (a new one when
/// there is none), which is returned to be checked against the database's
/// once it answers ([`reconcile_keys`]): nothing waits for the database.
fn shared_keys(
    history: &History,
    dir: Option<&std::path::Path>,
) -> Result<(Keys, Option<[u8; 32]>), Error> {
    let had_copy = dir.is_some_and(|d| d.join(crate::live::keys::SECRET_FILE).exists());
    let cached = match dir {
        Some(dir) => crate::live::keys::secret_in(dir)?,
        None => crate::live::keys::random_secret()?,
    };
    let secret = history.store().postgres().map(|pg| pg.key_secret(&cached));
    match secret {
        Some(Ok(secret)) => {
            if let Some(dir) = dir {
                crate::live::keys::keep_secret(dir, &secret)?;
            }
            Ok((Keys::from_secret(&secret), None))
        }
        Some(Err(crate::db::store::StoreError::Unavailable)) => {
            if had_copy {
                warn!("the database is unreachable at start: servers are keyed with this bridge's copy of its key secret");
            } else {
                warn!("the database is unreachable at start and this bridge has no copy of its key secret: servers are keyed with a new one, which the database takes if it has none (else the bridge stops once it answers, to start again with the database's)");
            }
            Ok((Keys::from_secret(&cached), Some(cached)))
        }
        Some(Err(e)) => Err(Error::Database {
            path: "key_secret".into(),
            reason: e.to_string(),
        }),
        None => Ok((Keys::from_secret(&cached), None)),
    }
}

/// Once the database answers, whether the secret the list was keyed with
/// at start (`keyed`, the copy) is the database's: then nothing changes;
/// else the database's is kept as the copy and the answer is the error
/// that stops the bridge, to start again keying as the other bridges do
/// (every key would change, and a list's keys cannot change under its
/// viewers). Runs on a thread of its own until `cancel` fires.
fn reconcile_keys(
    history: &History,
    dir: Option<&std::path::Path>,
    keyed: [u8; 32],
    cancel: &CancellationToken,
) -> Result<(), Error> {
    while !cancel.is_cancelled() {
        let mut store = history.store();
        let secret = store.postgres().map(|pg| pg.key_secret(&keyed));
        let opening = store.opening();
        drop(store);
        match secret {
            None => return Ok(()),
            Some(Ok(secret)) if secret == keyed => return Ok(()),
            Some(Ok(secret)) => {
                if let Some(dir) = dir {
                    crate::live::keys::keep_secret(dir, &secret)?;
                }
                return Err(Error::KeySecretChanged);
            }
            Some(Err(_)) => match opening {
                Some(opening) => opening.wait(),
                None => std::thread::sleep(std::time::Duration::from_millis(500)),
            },
        }
    }
    Ok(())
}

/// The webhooks kept in the bridge's database (`history`'s).
fn open_webhooks(
    config: &Config,
    visibility: Visibility,
    history: Arc<History>,
    counters: Arc<Counters>,
) -> Result<Webhooks, Error> {
    let settings = webhooks::Settings {
        allow_private: config.webhook_allow_private,
        public_url: config
            .public_url
            .as_ref()
            .map(|u| u.trim_end_matches('/').to_owned()),
        addresses: visibility.viewers(),
    };
    Webhooks::open(history, settings, counters)
}

/// Web Push, its key and subscriptions kept in the bridge's database
/// (`history`'s).
fn open_push(
    config: &Config,
    visibility: Visibility,
    history: Arc<History>,
) -> Result<Push, Error> {
    let public_url = config
        .public_url
        .as_ref()
        .map(|u| u.trim_end_matches('/').to_owned());
    let contact = match (&config.push_contact, &public_url) {
        (Some(given), _) => push::vapid::contact(given)
            .map_err(|e| format!("Web Push is off: its contact (--push-contact) {e}")),
        (None, Some(url)) if push::vapid::contact(url).is_ok() => {
            push::vapid::contact(url).map_err(|e| e.to_string())
        }
        (None, _) => Err(push::NO_CONTACT.to_owned()),
    };
    if let Err(why) = &contact {
        warn!("{why}");
    }
    let settings = push::Settings {
        allow_insecure: config.push_allow_insecure,
        public_url,
        contact,
        expire_after: config.push_expire_after,
        addresses: visibility.viewers(),
        max_subscriptions: config.push_max_subscriptions,
        max_per_address: config.push_max_per_address,
    };
    Push::open(history, settings)
}

/// Creates `dir` (mode 0700 where it is new) unless it exists.
fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    if !dir.is_dir() {
        return Err(std::io::Error::other("not a directory"));
    }
    Ok(())
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
    Router::new()
        .route("/ws", get(ws))
        .route("/healthz", get(healthz))
        .route("/api/servers", read(get(api::servers)))
        .route("/api/servers/{key}", read(get(history_api::server)))
        .route(
            "/api/servers/{key}/history",
            read(get(history_api::server_history)),
        )
        .route("/api/history", read(get(history_api::lobby_history)))
        .route(
            "/api/servers/{key}/week",
            read(get(history_api::server_week)),
        )
        .route("/api/week", read(get(history_api::lobby_week)))
        .route("/api/shields.json", read(get(badge::lobby_shield)))
        .route("/api/shields/{file}", read(get(badge::server_shield)))
        .route("/api/openapi.json", read(get(api::openapi)))
        .route("/api/push/key", read(get(push::api::key)))
        .route(
            "/api/push/subscription",
            put(push::api::subscribe).delete(push::api::unsubscribe),
        )
        .route("/api/{*rest}", any(api::unknown))
        .route("/api", any(api::unknown))
        .route("/api/", any(api::unknown))
        .route("/badge.svg", read(get(badge::lobby)))
        .route("/badge/{file}", read(get(badge::server)))
        .route("/card.png", read(get(badge::lobby_card)))
        .route("/card/{file}", read(get(badge::server_card)))
        .route("/metrics", get(metrics))
        .route("/join/{key}", get(pages::join))
        .merge(webhooks::api::routes())
        .merge(push::api::admin_routes())
        // The pages (their facts written in), the admin's page, the
        // build's files, and the 404 page for any other path.
        .fallback(pages::front)
        .with_state(ctx.clone())
        // Every refusal under /api/ (and of a badge or a card) the API's JSON, the
        // framework's and the file server's too.
        .layer(middleware::from_fn(http::error::json_errors))
        // Outermost, so that every answer under /api/ pays, the 404 of a
        // path that names nothing and the 405 of a wrong method too.
        .layer(middleware::from_fn_with_state(ctx, api::limit))
}

/// An API path's (or a badge's) `GET`, with the CORS preflight and a 405
/// as JSON for any other method.
fn read(get: MethodRouter<Arc<Ctx>>) -> MethodRouter<Arc<Ctx>> {
    get.options(api::preflight).fallback(api::wrong_method)
}

async fn ws(
    State(ctx): State<Arc<Ctx>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(client): Extension<http::limits::Client>,
    mut req: Request,
) -> Response {
    // The upgrade is done here rather than with axum's `WebSocketUpgrade`:
    // its socket hides tungstenite's frames, and large lists must go out
    // fragmented (see `session::outbox`) or every subscriber's write buffer
    // grows to the largest list ever pushed.
    let headers = req.headers();
    let key = match upgrade_key(headers) {
        Ok(key) => key,
        Err(why) => {
            ctx.metrics.refused_not_websocket.fetch_add(1, Relaxed);
            return (StatusCode::BAD_REQUEST, why).into_response();
        }
    };
    let origin = headers.get(header::ORIGIN).map(HeaderValue::as_bytes);
    let host = headers.get(header::HOST).map(HeaderValue::as_bytes);
    if !origin_header_allowed(
        origin,
        host,
        &ctx.config.allowed_origins,
        ctx.config.loopback_origins,
    ) {
        // A client can repeat this as fast as it can send requests: the
        // counter says how many, the log a sample (its origin cut short).
        ctx.metrics.refused_origin.fetch_add(1, Relaxed);
        throttled!(
            info,
            %peer,
            origin = %cut_bytes(origin.unwrap_or_default()),
            "upgrade from a foreign origin refused"
        );
        return (StatusCode::FORBIDDEN, "origin not allowed\n").into_response();
    }
    if ctx.cancel.is_cancelled() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    let Ok(accept) = HeaderValue::from_str(&derive_accept_key(key.as_bytes())) else {
        return (StatusCode::BAD_REQUEST, "bad Sec-WebSocket-Key\n").into_response();
    };
    let Some(address_slot) = client.ws_slot() else {
        ctx.metrics.refused_ws_address.fetch_add(1, Relaxed);
        debug!(%peer, "WebSocket limit of this address reached; upgrade refused");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many connections from your address\n",
        )
            .into_response();
    };
    let Ok(permit) = ctx.slots.clone().try_acquire_owned() else {
        ctx.metrics.refused_full.fetch_add(1, Relaxed);
        throttled!(warn, %peer, "connection limit reached; upgrade refused");
        return (StatusCode::SERVICE_UNAVAILABLE, "too many connections\n").into_response();
    };
    let upgrade = hyper::upgrade::on(&mut req);
    let handle = ctx.session.clone();
    ctx.sessions.spawn(async move {
        match upgrade.await {
            Ok(upgraded) => {
                session::run(handle, peer, TokioIo::new(upgraded), ws_config()).await;
            }
            Err(e) => debug!(%peer, error = %cut(&e), "websocket upgrade failed"),
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

/// Up or down, and nothing else: who may ask is anyone, so the master's
/// address and the OS error stay in the log (WARN when the master goes
/// down).
async fn healthz(State(ctx): State<Arc<Ctx>>) -> Response {
    let (status, body) = match ctx.upstream.current().master {
        MasterState::Up => (StatusCode::OK, r#"{"status":"ok","master":"up"}"#),
        MasterState::Down => (
            StatusCode::SERVICE_UNAVAILABLE,
            r#"{"status":"unavailable","master":"down"}"#,
        ),
    };
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn metrics(State(ctx): State<Arc<Ctx>>) -> Response {
    let mut text = ctx.metrics.render();
    if let Some(history) = &ctx.history {
        history.counters().render(&mut text);
    }
    ctx.events.render(&mut text);
    if let Some(notify) = &ctx.notify {
        notify.render(&mut text);
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}
