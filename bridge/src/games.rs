//! Other games' servers (Valve A2S, Serious Engine GameAgent), queried over
//! UDP in the background with the same shared-state design as the master
//! list: one refresher, a `watch` channel every WebSocket reads the newest
//! `bridgeGameServers` from. Off unless `--a2s` or `--gameagent-master` is
//! given.
//!
//! A GameAgent master's list is screened before anything on it is queried
//! ([`gamequery::screen`]), every round ends by its deadline, and errors
//! stay typed ([`error`]) until they are rendered for admins and viewers
//! ([`round`]), so `--hide-addresses` keeps addresses out of them too.

pub mod error;
mod refresh;
pub mod round;

pub use refresh::refresh;

use std::sync::Arc;

use gamequery::{Client, QueryOptions};
use protocol::bridge::GamesMessage;
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_util::sync::CancellationToken;

use crate::config::Config;

use self::round::Round;

/// The latest `bridgeGameServers`, as admins and as viewers get it.
#[derive(Debug, Clone)]
pub struct GamesSnapshot {
    /// Increases with every change, so a connection knows what it has sent.
    pub seq: u64,
    /// With addresses.
    pub full: Utf8Bytes,
    /// Without addresses when `--hide-addresses` is set, else `full`.
    pub viewer: Utf8Bytes,
}

/// The refresher's output channel.
#[derive(Debug)]
pub struct Games {
    tx: watch::Sender<Option<GamesSnapshot>>,
    hide_addresses: bool,
}

impl Games {
    /// A refresher for `config`, or `None` when no source is configured.
    pub fn from_config(config: &Config) -> Option<Self> {
        if config.a2s.is_empty() && config.gameagent_masters.is_empty() {
            return None;
        }
        let (tx, _) = watch::channel(None);
        Some(Self {
            tx,
            hide_addresses: config.hide_addresses,
        })
    }

    /// A receiver for one connection; it starts at the current state.
    pub fn subscribe(&self) -> watch::Receiver<Option<GamesSnapshot>> {
        self.tx.subscribe()
    }

    /// Publishes a round; unchanged contents wake nobody.
    pub fn publish(&self, round: &Round) {
        let full = GamesMessage::GameServers(round.render(false)).to_json();
        if self
            .tx
            .borrow()
            .as_ref()
            .is_some_and(|s| s.full.as_str() == full)
        {
            return;
        }
        let viewer = if self.hide_addresses {
            Utf8Bytes::from(GamesMessage::GameServers(round.render(true)).to_json())
        } else {
            Utf8Bytes::from(full.clone())
        };
        self.tx.send_modify(|s| {
            let seq = s.as_ref().map_or(1, |s| s.seq + 1);
            *s = Some(GamesSnapshot {
                seq,
                full: Utf8Bytes::from(full),
                viewer,
            });
        });
    }

    /// Refreshes every `game_poll_interval` until `cancel` fires.
    pub async fn run(self: Arc<Self>, config: Config, cancel: CancellationToken) {
        let client = Client::new(QueryOptions {
            timeout: config.game_query_timeout,
            retries: config.game_query_retries,
            layout: None,
            max_in_flight: config.game_query_concurrency,
        });
        loop {
            let round = tokio::select! {
                r = refresh(&client, &config) => r,
                () = cancel.cancelled() => return,
            };
            self.publish(&round);
            tokio::select! {
                () = tokio::time::sleep(config.game_poll_interval) => {}
                () = cancel.cancelled() => return,
            }
        }
    }
}
