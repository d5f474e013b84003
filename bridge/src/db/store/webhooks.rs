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

    /// A status card's message id and when it was last posted or edited
    /// (Unix ms); `None` if the webhook is gone.
    pub fn webhook_card(&mut self, id: &str) -> Result<Option<(Option<String>, i64)>, StoreError> {
        self.engine().webhook_card(id)
    }

    /// Stores a status card's message id and last edit; false if the
    /// webhook is gone.
    pub fn set_webhook_card(
        &mut self,
        id: &str,
        msg: Option<&str>,
        edit_ms: i64,
    ) -> Result<bool, StoreError> {
        self.engine().set_webhook_card(id, msg, edit_ms)
    }
}
