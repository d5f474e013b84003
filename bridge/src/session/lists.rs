//! What a browser gets from the shared state: query answers from the
//! shared list (at most one per `query_interval`), the master's
//! reachability when it changes, and the pushes of a subscription (the
//! list and the other games' servers, de-duplicated in [`push`]).
//!
//! [`push`]: super::push

use protocol::bridge::{ErrorCode, MasterState};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use super::{outbox::Close, push::Source, status, Session};
use crate::games::GamesWatch;

impl Session {
    /// A query answered from the shared cache: at once when the last answer
    /// is an interval old, else once at the interval's end however many
    /// arrive meanwhile (the page still gets its list, the bridge writes at
    /// most one per interval).
    pub(super) async fn on_query(&mut self) -> Result<(), Close> {
        let now = Instant::now();
        if now < self.next_answer {
            self.deferred_query = true;
            return Ok(());
        }
        self.next_answer = now + self.handle.config.query_interval;
        self.answer_query().await
    }

    /// The list in this role's form, the refusal while the master is down,
    /// or, before the first list, a promise to answer when it comes.
    pub(super) async fn answer_query(&mut self) -> Result<(), Close> {
        let (state, text) = {
            let shared = self.shared.borrow();
            let text = shared.list.as_ref().map(|l| self.role.pick(&l.text));
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
        self.push_list().await
    }

    /// Whatever brings a subscriber to the newest list (see
    /// [`Subscription::lists`](super::push::Subscription::lists)).
    pub(super) async fn push_list(&mut self) -> Result<(), Close> {
        let texts = {
            let shared = self.shared.borrow();
            self.subscription
                .lists(shared.list.as_ref(), shared.feed.as_ref(), self.role)
        };
        for text in texts {
            self.outbox.queue(Message::Text(text)).await?;
        }
        Ok(())
    }

    /// The other games' servers, unless the subscriber has them.
    pub(super) async fn push_games(&mut self) -> Result<(), Close> {
        let text = match self.games.as_mut() {
            Some(games) if self.subscription.is_on() => {
                let games = games.borrow_and_update();
                self.subscription
                    .fresh(Source::Games, games.as_ref(), self.role)
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
