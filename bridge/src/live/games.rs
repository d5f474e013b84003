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
//! Each server takes a bounded share of every push ([`budget`]): its text
//! cut and cleaned, its players and rules cut to fit.

pub mod budget;
pub mod error;
mod refresh;
pub mod round;

pub use refresh::refresh;

use std::sync::Arc;

use gamequery::{Client, Limits, QueryOptions};
use protocol::bridge::GamesMessage;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::{
    config::Config,
    live::publish::{Numbered, Publisher},
    visibility::Visibility,
};

use self::round::Round;

/// What a connection watches of the other games' servers: the latest
/// `bridgeGameServers` (`None` until the first round ends).
pub type GamesWatch = watch::Receiver<Option<Numbered>>;

/// The refresher's output channel.
#[derive(Debug)]
pub struct Games {
    out: Publisher<Option<Numbered>>,
}

impl Games {
    /// A refresher for `config`, or `None` when no source is configured.
    pub fn from_config(config: &Config, visibility: Visibility) -> Option<Self> {
        if config.a2s.is_empty() && config.gameagent_masters.is_empty() {
            return None;
        }
        Some(Self {
            out: Publisher::new(None, visibility),
        })
    }

    /// A receiver for one connection; it starts at the current state.
    pub fn subscribe(&self) -> GamesWatch {
        self.out.subscribe()
    }

    /// Publishes a round; unchanged contents wake nobody.
    pub fn publish(&self, round: &Round) {
        let full = GamesMessage::GameServers(round.render(Visibility::ADMINS)).to_json();
        if self.out.is_current(full.as_bytes()) {
            return;
        }
        let text = self.out.encode(full, |viewers| {
            GamesMessage::GameServers(round.render(viewers)).to_json()
        });
        self.out.publish(text, |_| {});
    }

    /// Refreshes every `game_poll_interval` until `cancel` fires.
    pub async fn run(self: Arc<Self>, config: Config, cancel: CancellationToken) {
        let client = Client::new(QueryOptions {
            timeout: config.game_query_timeout,
            retries: config.game_query_retries,
            layout: None,
            max_in_flight: config.game_query_concurrency,
            limits: Limits::DEFAULT,
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
