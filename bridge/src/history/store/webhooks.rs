//! The webhooks' table (embedded migration 3, PostgreSQL migration 2):
//! the rows of [`crate::webhooks::store`], kept in the bridge's database
//! beside the history, through either engine's row operations.

use super::engine::WebhookRow;
use super::{Store, StoreError};

impl Store {
    /// Every stored webhook, oldest first.
    pub fn webhooks(&mut self) -> Result<Vec<WebhookRow>, StoreError> {
        self.engine().webhooks()
    }

    /// Adds a webhook.
    pub fn insert_webhook(&mut self, row: &WebhookRow) -> Result<(), StoreError> {
        self.engine().insert_webhook(row)
    }

    /// Stores a webhook's state; false if it is gone.
    pub fn set_webhook_state(
        &mut self,
        id: &str,
        enabled: bool,
        failures: u32,
    ) -> Result<bool, StoreError> {
        self.engine().set_webhook_state(id, enabled, failures)
    }

    /// Removes a webhook; false if it was not there.
    pub fn delete_webhook(&mut self, id: &str) -> Result<bool, StoreError> {
        self.engine().delete_webhook(id)
    }
}
