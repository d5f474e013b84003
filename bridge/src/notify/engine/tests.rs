//! The engine over the embedded database: what another writer changes is
//! read again; one event is written once per watch; a claim holds its
//! row until its lease ends; an ended delivery is counted only after its
//! channel's bookkeeping.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use lobby_testkit::wait::bounded;

use protocol::{watch::WebhookSpec, ServerEntry, ServerKey};

use super::*;
use crate::{
    db::store::{Database, WebhookRow, WebhookStore},
    notify::{
        channel::{Names, Planned},
        push::{self, Push},
        watch::ServerChange,
        webhooks::{self, Webhooks},
    },
};

struct Engine {
    database: Database,
    hooks: Arc<Webhooks>,
    notify: Arc<Notify>,
}

fn engine(database: Database) -> Engine {
    let counters = Arc::new(NotifyCounters::default());
    let hooks = Arc::new(
        Webhooks::open(
            WebhookStore::new(database.clone()),
            webhooks::WebhookSettings {
                allow_private: true,
                public_url: None,
                visibility: crate::visibility::Visibility::new(false),
            },
            counters.clone(),
        )
        .unwrap(),
    );
    let push = Arc::new(
        Push::open(
            crate::db::store::PushStore::new(database.clone()),
            push::PushSettings {
                allow_insecure: true,
                public_url: None,
                contact: Ok("mailto:ops@lobby.example".into()),
                expire_after: crate::Config::DEFAULT_PUSH_EXPIRE_AFTER,
                visibility: crate::visibility::Visibility::new(false),
                max_subscriptions: 10,
                max_per_address: 10,
            },
        )
        .unwrap(),
    );
    let notify = Arc::new(Notify::new(
        database.clone(),
        vec![hooks.clone() as Arc<dyn Channel>, push as Arc<dyn Channel>],
        counters,
    ));
    Engine {
        database,
        hooks,
        notify,
    }
}

fn row(id: &str) -> WebhookRow {
    let spec = WebhookSpec::from_value(&serde_json::json!({
        "url": "http://127.0.0.1:9/hook", "format": "standard",
        "events": ["server-online"], "servers": "all", "cooldown": 0
    }))
    .unwrap();
    WebhookRow {
        id: id.into(),
        spec: spec.to_json().to_string(),
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into(),
        enabled: true,
        failures: 0,
        created_ms: 1,
    }
}

fn online(name: &str) -> Arc<Occurrence> {
    Arc::new(Occurrence {
        key: ServerKey(7),
        change: ServerChange::Online,
        server: Arc::new(ServerEntry {
            registrant: None,
            name: name.into(),
            address: Some("192.0.2.1".into()),
            port: Some(20000),
            stats: protocol::Stats::default(),
        }),
        at: SystemTime::now(),
    })
}

/// Runs `f` on the webhooks' rows from a blocking thread (PostgreSQL's
/// client must not run on the runtime).
async fn on_store<T: Send + 'static>(
    database: &Database,
    f: impl FnOnce(&WebhookStore) -> T + Send + 'static,
) -> T {
    let store = WebhookStore::new(database.clone());
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .unwrap()
}

async fn another_writers_changes_are_read_again(reader: Database, history: Database) {
    let e = engine(reader);
    let mut state = SyncState::default();
    e.notify.sync(&mut state).await;
    assert!(e.notify.synced.load(Relaxed));
    assert_eq!(e.hooks.targets(), 0);
    // Written beside this engine, as another bridge would.
    let id = "wh_00000000000000aa";
    assert!(on_store(&history, move |s| s.insert(&row(id), 50).unwrap()).await);
    e.notify.sync(&mut state).await;
    assert_eq!(e.hooks.targets(), 1, "a new webhook is read");
    assert!(on_store(&history, move |s| s.set_state(id, false, 0).unwrap()).await);
    e.notify.sync(&mut state).await;
    assert!(e.hooks.decide(&online("Alpha")).is_empty(), "disabled");
    assert!(on_store(&history, move |s| s.delete(id).unwrap()).await);
    e.notify.sync(&mut state).await;
    assert_eq!(e.hooks.targets(), 0, "a deleted webhook is forgotten");
}

#[tokio::test]
async fn another_writers_changes_are_read_again_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open(Some(dir.path())).unwrap();
    another_writers_changes_are_read_again(database.clone(), database).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_writers_changes_are_read_again_on_postgres() {
    let (cluster, url) = tokio::task::spawn_blocking(|| {
        let cluster = lobby_testkit::postgres::Cluster::start().unwrap();
        let url = cluster.create_database("notify").unwrap();
        (cluster, url)
    })
    .await
    .unwrap();
    let url: crate::db::store::DatabaseUrl = url.parse().unwrap();
    let (reader, history) = (Database::connect(&url), Database::connect(&url));
    another_writers_changes_are_read_again(reader.clone(), history.clone()).await;
    tokio::task::spawn_blocking(move || {
        drop(reader);
        drop(history);
        drop(cluster);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn one_event_is_written_once_however_many_decide_it() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open(Some(dir.path())).unwrap();
    assert!(WebhookStore::new(database.clone())
        .insert(&row("wh_00000000000000aa"), 50)
        .unwrap());
    let (a, b) = (engine(database.clone()), engine(database.clone()));
    for e in [&a, &b] {
        e.notify.sync(&mut SyncState::default()).await;
    }
    let event = online("Alpha");
    for e in [&a, &b] {
        e.notify.keep(event.clone());
        e.notify.flush().await;
        assert_eq!(e.notify.journal_len(), 1, "waits for the next read");
        e.notify.sync(&mut SyncState::default()).await;
        e.notify.flush().await;
    }
    let written = |e: &Engine| e.notify.counters.written.load(Relaxed);
    assert_eq!(
        written(&a) + written(&b),
        1,
        "the second writer finds it written"
    );
    // A cooldown of 0: the same bridge's next event is a new one.
    a.notify.keep(online("Alpha"));
    a.notify.sync(&mut SyncState::default()).await;
    a.notify.flush().await;
    assert_eq!(written(&a), 2);

    // Claimed once; due again only after the lease.
    let now = now_ms();
    let lease = LEASE.as_millis() as i64;
    let claimed = e_claim(&a, now, lease);
    assert_eq!(claimed.len(), 2);
    assert!(e_claim(&b, now, lease).is_empty(), "held by the claim");
    let again = e_claim(&b, now + lease, lease);
    assert_eq!(again.len(), 2, "due again after the lease");
    assert_eq!(
        again[0].msg_id, claimed[0].msg_id,
        "with the same webhook-id"
    );
    assert_eq!(again[0].attempts, 2);
}

fn e_claim(e: &Engine, now: i64, lease: i64) -> Vec<DeliveryRow> {
    e.database.lock().claim(now, lease, 10).unwrap()
}

/// A push channel whose every attempt finds its subscription gone, and
/// whose bookkeeping of that waits until the test lets it finish.
#[derive(Debug, Default)]
struct GatedGone {
    entered: tokio::sync::Notify,
    release: tokio::sync::Notify,
}

impl Channel for GatedGone {
    fn name(&self) -> &'static str {
        "push"
    }
    fn names(&self) -> Names {
        Names {
            outcomes: "gated_sent_total",
            outcomes_help: "",
            attempts: "gated_attempts_total",
            attempts_help: "",
            targets: "gated_targets",
            targets_help: "",
            gone: true,
        }
    }
    fn targets(&self) -> usize {
        1
    }
    fn decide(&self, _: &Occurrence) -> Vec<Planned> {
        Vec::new()
    }
    fn reload(&self) -> BoxFuture<'_, bool> {
        Box::pin(async { true })
    }
    fn changed<'a>(&'a self, _: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
    fn send<'a>(&'a self, _: &'a DeliveryRow) -> BoxFuture<'a, Sent> {
        Box::pin(async { Sent::Gone(410) })
    }
    fn retry_wait(&self, _: u32, _: Option<Duration>) -> Option<Duration> {
        None
    }
    fn keeps_done(&self) -> bool {
        false
    }
    fn ended<'a>(&'a self, _: &'a DeliveryRow, _: &'a Sent) -> BoxFuture<'a, ()> {
        Box::pin(async {
            self.entered.notify_one();
            self.release.notified().await;
        })
    }
}

#[tokio::test]
async fn an_ended_delivery_is_counted_once_its_channel_has_done_its_bookkeeping() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open(Some(dir.path())).unwrap();
    let channel = Arc::new(GatedGone::default());
    let counters = Arc::new(NotifyCounters::default());
    let notify = Arc::new(Notify::new(
        database,
        vec![channel.clone() as Arc<dyn Channel>],
        counters.clone(),
    ));
    let row = DeliveryRow {
        id: 1,
        channel: "push".into(),
        target: "00000000000000aa".into(),
        msg_id: "msg_1".into(),
        event: "server-online".into(),
        key: 7,
        body: "{}".into(),
        attempts: 1,
        created_ms: now_ms(),
    };
    let delivering = tokio::spawn({
        let notify = notify.clone();
        async move { notify.deliver(row).await }
    });
    bounded(
        "the channel's bookkeeping begins",
        channel.entered.notified(),
    )
    .await;
    assert_eq!(
        counters.push.gone.load(Relaxed),
        0,
        "counted while the gone subscription was still being forgotten"
    );
    channel.release.notify_one();
    bounded("the delivery ends", delivering).await.unwrap();
    assert_eq!(counters.push.gone.load(Relaxed), 1);
}
