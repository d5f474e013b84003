//! What a browser gets from the shared state: query answers from the
//! shared list, the answers to `bridgeSubscribe`, the master's
//! reachability when it changes, and the pushes of a subscription (the
//! list and the other games' servers, de-duplicated in [`push`]).
//!
//! What the browser asks for and costs a whole list (a query's answer, a
//! subscribe answered with the list, a snapshot or a catch-up) leaves at
//! most once per `query_interval` per socket, and only with a token of the
//! client address's budget (shared with `/api/`); the rest waits
//! ([`Held`]): queries are answered once, a subscribe by the latest one.
//! A subscribe that changes nothing is confirmed at once: a delta
//! subscriber gets the empty delta of `docs/protocol.md` §3, a plain subscriber
//! `bridgeStatus` with the master's state (its list is current: a changed
//! list would have been pushed). Pushes of a changed list are never held.
//!
//! [`push`]: super::push

use std::sync::atomic::Ordering::Relaxed;

use protocol::{
    bridge::{ErrorCode, MasterState},
    delta::Subscribe,
};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use super::{
    outbox::Close,
    push::{Answer, Pushed},
    status, Session,
};
use crate::live::games::GamesWatch;

/// Answers a socket asked for that wait for its next turn.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// Since when a query waits (however many came since).
    query: Option<Instant>,
    /// The latest subscribe that needs the list, and since when one waits.
    pub(super) subscribe: Option<(Subscribe, Instant)>,
}

impl Held {
    pub(crate) fn any(&self) -> bool {
        self.query.is_some() || self.subscribe.is_some()
    }
}

impl Session {
    /// A query answered from the shared cache: at once when the socket's
    /// interval has passed (and its address has a token), else once when
    /// it may, however many arrive meanwhile (the page still gets its
    /// list, the bridge writes at most one per interval).
    pub(super) async fn on_query(&mut self) -> Result<(), Close> {
        if self.held.query.is_some() {
            return Ok(());
        }
        if self.held.any() || !self.may_answer() {
            self.held.query = Some(Instant::now());
            return Ok(());
        }
        self.answer_query().await
    }

    /// `bridgeSubscribe`: confirmed at once when it changes nothing,
    /// answered at once when nothing is held and the socket may send a
    /// list, else held (replacing a subscribe held before).
    pub(super) async fn on_subscribe(&mut self, sub: Subscribe) -> Result<(), Close> {
        let answer = {
            let shared = self.shared.borrow();
            self.subscription
                .answer(&sub, shared.list.as_ref(), shared.feed.as_ref())
        };
        match answer {
            Answer::Confirm | Answer::Nothing => {
                self.held.subscribe = None;
                self.subscribe_now(sub, answer).await
            }
            Answer::Lists => {
                if let Some((_, since)) = self.held.subscribe.take() {
                    self.held.subscribe = Some((sub, since));
                    return Ok(());
                }
                if self.held.any() || !self.may_answer() {
                    self.held.subscribe = Some((sub, Instant::now()));
                    return Ok(());
                }
                self.subscribe_now(sub, answer).await
            }
        }
    }

    /// Answers `sub` as `answer` says (its turn, if it costs one, taken).
    async fn subscribe_now(&mut self, sub: Subscribe, answer: Answer) -> Result<(), Close> {
        if answer == Answer::Confirm && !sub.deltas {
            // The list if it changed since it was pushed (its push is on
            // its way), else the confirmation.
            if !self.push_list().await? {
                let state = self.shared.borrow().master;
                self.told_state = state;
                self.send_bridge(&status(state)).await?;
            }
            return self.push_games().await;
        }
        self.subscription.start(sub, answer == Answer::Lists);
        self.push_list().await?;
        self.push_games().await
    }

    /// Whether an answer that costs a whole list may leave now: the
    /// socket's interval has passed and the client address has a token
    /// (spent here). If so the next may leave an interval later; if not,
    /// `next_answer` says when to try again.
    fn may_answer(&mut self) -> bool {
        let now = Instant::now();
        let metrics = &self.handle.metrics;
        if now < self.next_answer {
            metrics.held_interval.fetch_add(1, Relaxed);
            return false;
        }
        if !self.handle.budget.take(self.peer.ip(), now.into_std()) {
            metrics.held_address.fetch_add(1, Relaxed);
            self.next_answer = now + self.handle.budget.retry_after();
            return false;
        }
        self.next_answer = now + self.handle.config.query_interval;
        true
    }

    /// `next_answer` has come: the held answers leave in the order they
    /// were asked for, as far as the socket's turns and its address's
    /// tokens allow.
    pub(super) async fn answer_held(&mut self) -> Result<(), Close> {
        loop {
            let query_first = match (self.held.query, &self.held.subscribe) {
                (Some(query), Some((_, since))) => query <= *since,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return Ok(()),
            };
            if query_first {
                if !self.may_answer() {
                    return Ok(());
                }
                self.held.query = None;
                self.answer_query().await?;
                continue;
            }
            let Some((sub, since)) = self.held.subscribe.take() else {
                return Ok(());
            };
            // The list may have changed meanwhile: judged again.
            let answer = {
                let shared = self.shared.borrow();
                self.subscription
                    .answer(&sub, shared.list.as_ref(), shared.feed.as_ref())
            };
            if answer == Answer::Lists && !self.may_answer() {
                self.held.subscribe = Some((sub, since));
                return Ok(());
            }
            self.subscribe_now(sub, answer).await?;
        }
    }

    /// The list in this role's form, the refusal while the master is down,
    /// or, before the first list, a promise to answer when it comes.
    pub(super) async fn answer_query(&mut self) -> Result<(), Close> {
        let (state, text) = {
            let shared = self.shared.borrow();
            let text = shared.list.as_ref().map(|l| self.role.pick(l.text.forms()));
            (shared.master, text)
        };
        if state == MasterState::Down {
            return self.refuse(ErrorCode::MasterDown).await;
        }
        match text {
            Some(text) => self.outbox.queue(Message::Text(text)).await,
            None => {
                self.pending_query = true;
                Ok(())
            }
        }
    }

    /// The shared state changed: tell about reachability, push the list.
    pub(super) async fn on_shared(&mut self) -> Result<(), Close> {
        let state = self.shared.borrow_and_update().master;
        if state != self.told_state {
            self.told_state = state;
            self.send_bridge(&status(state)).await?;
        }
        if self.pending_query {
            self.pending_query = false;
            self.answer_query().await?;
        }
        self.push_list().await.map(drop)
    }

    /// Whatever brings a subscriber to the newest list (see
    /// [`Subscription::lists`](super::push::Subscription::lists)); whether
    /// anything was sent.
    pub(super) async fn push_list(&mut self) -> Result<bool, Close> {
        let texts = {
            let shared = self.shared.borrow();
            self.subscription
                .lists(shared.list.as_ref(), shared.feed.as_ref(), self.role)
        };
        let sent = !texts.is_empty();
        for text in texts {
            self.outbox.queue(Message::Text(text)).await?;
        }
        Ok(sent)
    }

    /// The other games' servers, unless the subscriber has them.
    pub(super) async fn push_games(&mut self) -> Result<(), Close> {
        let text = match self.games.as_mut() {
            Some(games) if self.subscription.is_on() => {
                let games = games.borrow_and_update();
                self.subscription
                    .fresh(Pushed::Games, games.as_ref(), self.role)
            }
            _ => None,
        };
        match text {
            Some(text) => self.outbox.queue(Message::Text(text)).await,
            None => Ok(()),
        }
    }
}

/// Waits for the next change of the other games' servers; never, when
/// they are not configured.
pub(super) async fn games_changed(games: &mut Option<GamesWatch>) -> bool {
    match games {
        Some(rx) => rx.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}
