//! The wiring: a [`Bridge`] made of its database, its notifiers and its
//! live list, the routes to every handler, and the run until a graceful
//! shutdown.

use std::{future::Future, sync::Arc};

use axum::{
    middleware,
    routing::{any, get, put, MethodRouter},
    Router,
};
use tokio::{net::TcpListener, sync::Semaphore};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{info, warn};

use crate::{
    budget::Budget,
    config::Config,
    ctx::Ctx,
    db::database::{reconcile_keys, Opened},
    error::Error,
    http,
    http::{answers::Answers, api, badge, documents::Pages, history_api, pages},
    live::{
        games::Games,
        session::{AuthGuard, Handle, SessionSettings},
        upstream::{Source, Upstream},
    },
    metrics::Metrics,
    notify::{notifiers::Notifiers, push, watch::Events, webhooks},
    visibility::Visibility,
};

/// A bridge: configuration plus shared state. Build it, keep
/// [`Bridge::metrics`] if you want to look inside, then [`Bridge::run`].
#[derive(Debug)]
pub struct Bridge {
    ctx: Arc<Ctx>,
}

impl Bridge {
    /// A bridge that does nothing until [`Bridge::run`], on its database
    /// (the data directory, the key secret, the history): an error when
    /// that cannot be opened, and then there is no bridge to start.
    pub fn new(config: Config) -> Result<Self, Error> {
        Self::build(config, None)
    }

    /// A bridge in front of a master running in the same process: it
    /// learns every change of `registry` at once instead of polling
    /// (`config.master` still names the master's TCP address, where admins'
    /// test servers register).
    pub fn embedding(config: Config, registry: Arc<master::Registry>) -> Result<Self, Error> {
        Self::build(config, Some(registry))
    }

    fn build(config: Config, embedded: Option<Arc<master::Registry>>) -> Result<Self, Error> {
        let metrics = Arc::new(Metrics::default());
        let visibility = Visibility::new(config.hide_addresses);
        let Opened {
            keys,
            database,
            history,
            provisional_secret,
        } = Opened::open(&config)?;
        let Notifiers {
            webhooks,
            push,
            engine: notify,
        } = Notifiers::open(&config, visibility, &database)?;
        let upstream = Arc::new(Upstream::new(visibility, metrics.clone(), keys));
        webhooks.show_list(upstream.subscribe());
        let source = Source::new(&upstream, embedded, &config);
        let slots = Arc::new(Semaphore::new(config.max_connections));
        let games = Games::from_config(&config, visibility).map(Arc::new);
        let cancel = CancellationToken::new();
        let budget = Arc::new(Budget::new(config.api_rate_per_sec, config.api_burst));
        let events = Arc::new(Events::new(config.offline_after, history.clone()));
        let config_static_dir = config.static_dir.clone();
        let session = Arc::new(Handle {
            config: SessionSettings::new(&config, visibility),
            shared: upstream.subscribe(),
            games: games.as_ref().map(|g| g.subscribe()),
            upstream: upstream.clone(),
            metrics: metrics.clone(),
            auth: AuthGuard::new(config.auth_max_failures, config.auth_window)
                .with_total(config.auth_max_failures_total),
            budget: budget.clone(),
            cancel: cancel.clone(),
        });
        Ok(Self {
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
                pages: Pages::new(&config_static_dir),
            }),
        })
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
        let poller = tokio::spawn(ctx.source.clone().run(ctx.cancel.child_token()));
        let games = ctx
            .games
            .clone()
            .map(|games| tokio::spawn(games.run(ctx.config.clone(), ctx.cancel.child_token())));
        let recorder = tokio::spawn(
            ctx.history
                .clone()
                .record(ctx.upstream.clone(), ctx.cancel.child_token()),
        );
        // Events and their notifications: off the list's publishing path
        // (their own watch receiver, their own tasks).
        let notifier = tokio::spawn(
            ctx.notify
                .clone()
                .run(ctx.events.subscribe(), ctx.cancel.child_token()),
        );
        // Subscriptions not renewed in time are deleted; the task ends with
        // the others at shutdown.
        tokio::spawn(ctx.push.clone().sweep(ctx.cancel.child_token()));
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
            if let Some(secret) = ctx.provisional_secret {
                let database = ctx.history.database().clone();
                let dir = ctx.config.data_dir.clone();
                let spawned =
                    std::thread::Builder::new()
                        .name("key-secret".into())
                        .spawn(move || {
                            let _ =
                                tx.send(reconcile_keys(&database, dir.as_deref(), secret, &cancel));
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
        let _ = tokio::time::timeout(grace, notifier).await;
        recorder.abort();
        if let Some(games) = games {
            games.abort();
        }
        failed.map_or(Ok(()), Err)
    }
}

fn router(ctx: Arc<Ctx>) -> Router {
    Router::new()
        .route("/ws", get(http::upgrade::ws))
        .route("/healthz", get(http::status::healthz))
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
        .route("/metrics", get(http::status::metrics))
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
