//! The webhooks' table (embedded migration 3, PostgreSQL migration 2):
//! every change noted in `notify_changes` in its transaction, so every
//! bridge reads it again;
//! the rows of [`crate::notify::webhooks::store`], kept in the bridge's database
//! beside the history, through either engine's row operations.

use super::{Store, StoreError};

/// One webhook as stored: its row, not yet validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRow {
    pub id: String,
    /// The validated request, as JSON text.
    pub spec: String,
    /// `whsec_` + base64.
    pub secret: String,
    pub enabled: bool,
    pub failures: u32,
    pub created_ms: i64,
}

/// A status card's columns of its webhook's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardRow {
    /// The message it edits (`None`: none posted yet, or deleted).
    pub msg: Option<String>,
    /// When it was last posted or edited (Unix ms; 0: never).
    pub edit_ms: i64,
    /// Until when a bridge holds its send slot (Unix ms; 0: nobody).
    pub claim_ms: i64,
}

/// A bridge's try at a status card's send slot: several bridges on one
/// database post or edit one card, so at most one of them may send it at
/// a time, and only once per window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CardClaim {
    /// This bridge posts or edits it now: `msg`, the stored message id;
    /// `claim` names the slot taken, given back when the send ends (or
    /// free again at that time, Unix ms, if its bridge dies first).
    Won { msg: Option<String>, claim: i64 },
    /// Sent within the window, or being sent by another bridge: not
    /// before `at` (Unix ms).
    Later { at: i64 },
    /// The webhook is gone.
    Gone,
}

impl Store {
    /// Every stored webhook, oldest first.
    pub fn webhooks(&mut self) -> Result<Vec<WebhookRow>, StoreError> {
        self.engine().webhooks()
    }

    /// Adds a webhook unless `max` are stored; whether it was added.
    pub fn insert_webhook(&mut self, row: &WebhookRow, max: usize) -> Result<bool, StoreError> {
        self.in_transaction(|e| {
            if e.webhooks()?.len() >= max {
                return Ok(false);
            }
            e.insert_webhook(row)?;
            e.webhook_enabled_at(&row.id, row.created_ms)?;
            e.note_change("webhook", &row.id)?;
            Ok(true)
        })
    }

    /// Stores a webhook's state; false if it is gone.
    pub fn set_webhook_state(
        &mut self,
        id: &str,
        enabled: bool,
        failures: u32,
    ) -> Result<bool, StoreError> {
        self.in_transaction(|e| {
            let found = e.set_webhook_state(id, enabled, failures)?;
            if found {
                if enabled {
                    e.webhook_enabled_at(id, super::now_ms())?;
                } else {
                    e.drop_pending(id)?;
                }
                e.note_change("webhook", id)?;
            }
            Ok(found)
        })
    }

    /// Removes a webhook; false if it was not there.
    pub fn delete_webhook(&mut self, id: &str) -> Result<bool, StoreError> {
        self.in_transaction(|e| {
            let found = e.delete_webhook(id)?;
            e.drop_pending(id)?;
            e.note_change("webhook", id)?;
            Ok(found)
        })
    }

    /// A status card's row; `None` if the webhook is gone.
    pub fn webhook_card(&mut self, id: &str) -> Result<Option<CardRow>, StoreError> {
        self.engine().webhook_card(id)
    }

    /// Tries to take the send slot of the status card `id` at `now` for
    /// `lease_ms`: taken by one bridge at a time (one conditional update,
    /// whatever the number of bridges on the database), and only once
    /// `every_ms` have passed since the card was last posted or edited.
    pub fn claim_webhook_card(
        &mut self,
        id: &str,
        now: i64,
        every_ms: i64,
        lease_ms: i64,
    ) -> Result<CardClaim, StoreError> {
        let until = now.saturating_add(lease_ms);
        if let Some(msg) = self.engine().claim_webhook_card(id, now, every_ms, until)? {
            return Ok(CardClaim::Won { msg, claim: until });
        }
        let Some(card) = self.engine().webhook_card(id)? else {
            return Ok(CardClaim::Gone);
        };
        let window = card.edit_ms.saturating_add(every_ms);
        // A holder posts or edits after now, which starts a new window.
        let held = card.claim_ms > now;
        let at = if held {
            window.max(now.saturating_add(every_ms))
        } else {
            window
        };
        Ok(CardClaim::Later { at: at.max(now) })
    }

    /// Stores a status card's message id (`None`: post anew next) and
    /// when it was last posted or edited, and gives back the send slot
    /// `claim` took (unless another bridge has it since); false if the
    /// webhook is gone.
    pub fn set_webhook_card(
        &mut self,
        id: &str,
        msg: Option<&str>,
        edit_ms: i64,
        claim: i64,
    ) -> Result<bool, StoreError> {
        self.engine().set_webhook_card(id, msg, edit_ms, claim)
    }

    /// Gives back the send slot `claim` took, nothing sent (unless another
    /// bridge has it since).
    pub fn release_webhook_card(&mut self, id: &str, claim: i64) -> Result<(), StoreError> {
        self.engine().release_webhook_card(id, claim)
    }
}
