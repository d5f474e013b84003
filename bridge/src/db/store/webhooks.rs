//! The webhooks' table (embedded migration 3, PostgreSQL migration 2),
//! owned by the webhooks through a [`WebhookStore`]: kept in the bridge's
//! one [`Database`] beside the history, through either engine's row
//! operations, every change noted in `notify_changes` in its transaction
//! so every bridge reads it again.

use super::engine::{Outcome, Result, WebhookRows, MAX_WEBHOOK_TEXT};
use super::sql::{self, Sql};
use super::{Database, DoneDelivery, MutexGuard, Store};

/// The channel name the webhooks' delivery rows carry.
pub const CHANNEL: &str = "webhook";

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

/// The webhooks' rows in the bridge's database: every call is short and
/// may block (callers run it on a blocking thread).
#[derive(Debug, Clone)]
pub struct WebhookStore {
    database: Database,
}

impl WebhookStore {
    /// The webhooks kept in `database`.
    pub fn new(database: Database) -> Self {
        Self { database }
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        self.database.lock()
    }

    /// Every stored webhook, oldest first.
    pub fn load(&self) -> Result<Vec<WebhookRow>> {
        self.store().engine().webhooks()
    }

    /// One stored webhook.
    pub fn get(&self, id: &str) -> Result<Option<WebhookRow>> {
        self.store().engine().webhook(id)
    }

    /// Adds one unless `max` are stored already; whether it was added.
    pub fn insert(&self, row: &WebhookRow, max: usize) -> Result<bool> {
        self.store().in_transaction(|e| {
            if e.webhooks()?.len() >= max {
                return Ok(false);
            }
            e.insert_webhook(row)?;
            e.webhook_enabled_at(&row.id, row.created_ms)?;
            e.note_change(CHANNEL, &row.id)?;
            Ok(true)
        })
    }

    /// Stores a webhook's state; false if it is gone. Disabling it drops
    /// its deliveries not yet sent.
    pub fn set_state(&self, id: &str, enabled: bool, failures: u32) -> Result<bool> {
        self.store().in_transaction(|e| {
            let found = e.set_webhook_state(id, enabled, failures)?;
            if found {
                if enabled {
                    e.webhook_enabled_at(id, super::now_ms())?;
                } else {
                    e.drop_pending(id)?;
                }
                e.note_change(CHANNEL, id)?;
            }
            Ok(found)
        })
    }

    /// Removes one (and its deliveries not yet sent); false if it was not
    /// there.
    pub fn delete(&self, id: &str) -> Result<bool> {
        self.store().in_transaction(|e| {
            let found = e.delete_webhook(id)?;
            e.drop_pending(id)?;
            e.note_change(CHANNEL, id)?;
            Ok(found)
        })
    }

    /// Its last `limit` ended deliveries, newest first.
    pub fn recent(&self, id: &str, limit: i64) -> Result<Vec<DoneDelivery>> {
        self.store().engine().recent(id, limit)
    }

    /// Stores a delivery that ended at once (a test).
    pub fn record(&self, id: &str, done: &DoneDelivery) -> Result<()> {
        self.store().engine().record(CHANNEL, id, done)
    }

    /// Counts an ended delivery (see `WebhookRows::webhook_outcome`),
    /// noting the change for the other bridges: its state after, `None`
    /// if it is gone.
    pub fn outcome(&self, id: &str, ok: bool, disable_after: u32) -> Result<Option<Outcome>> {
        self.store().in_transaction(|e| {
            let state = e.webhook_outcome(id, ok, disable_after)?;
            if state.is_some() {
                e.note_change(CHANNEL, id)?;
            }
            Ok(state)
        })
    }

    /// Tries to take the send slot of the status card `id` at `now` for
    /// `lease_ms`: taken by one bridge at a time (one conditional update,
    /// whatever the number of bridges on the database), and only once
    /// `every_ms` have passed since the card was last posted or edited.
    pub fn claim_card(
        &self,
        id: &str,
        now: i64,
        every_ms: i64,
        lease_ms: i64,
    ) -> Result<CardClaim> {
        let until = now.saturating_add(lease_ms);
        let mut store = self.store();
        if let Some(msg) = store
            .engine()
            .claim_webhook_card(id, now, every_ms, until)?
        {
            return Ok(CardClaim::Won { msg, claim: until });
        }
        let Some(card) = store.engine().webhook_card(id)? else {
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
    pub fn set_card(&self, id: &str, msg: Option<&str>, edit_ms: i64, claim: i64) -> Result<bool> {
        self.store()
            .engine()
            .set_webhook_card(id, msg, edit_ms, claim)
    }

    /// Gives back the send slot `claim` took, nothing sent (unless another
    /// bridge has it since).
    pub fn release_card(&self, id: &str, claim: i64) -> Result<()> {
        self.store().engine().release_webhook_card(id, claim)
    }
}

/// The `webhooks` columns a [`WebhookRow`] is read from, texts cut to
/// `?1` bytes: written once for the list and the lookup by id.
macro_rules! select_webhooks {
    () => {
        "SELECT CAST(substr(id, 1, ?1) AS TEXT), CAST(substr(spec, 1, ?1) AS TEXT), \
         CAST(substr(secret, 1, ?1) AS TEXT), enabled, failures, created_ms FROM webhooks"
    };
}

impl<S: Sql> WebhookRows for S {
    fn webhooks(&mut self) -> Result<Vec<WebhookRow>> {
        self.rows(
            concat!(select_webhooks!(), " ORDER BY created_ms, id"),
            &[&MAX_WEBHOOK_TEXT],
        )
    }

    fn webhook(&mut self, id: &str) -> Result<Option<WebhookRow>> {
        self.row(
            concat!(select_webhooks!(), " WHERE id = ?2"),
            &[&MAX_WEBHOOK_TEXT, &id],
        )
    }

    fn insert_webhook(&mut self, row: &WebhookRow) -> Result<()> {
        let failures = i64::from(row.failures);
        self.run(
            sql::INSERT_WEBHOOK,
            &[
                &row.id,
                &row.spec,
                &row.secret,
                &row.enabled,
                &failures,
                &row.created_ms,
            ],
        )?;
        Ok(())
    }

    fn set_webhook_state(&mut self, id: &str, enabled: bool, failures: u32) -> Result<bool> {
        let failures = i64::from(failures);
        Ok(self.run(sql::SET_WEBHOOK_STATE, &[&id, &enabled, &failures])? > 0)
    }

    fn delete_webhook(&mut self, id: &str) -> Result<bool> {
        Ok(self.run(sql::DELETE_WEBHOOK, &[&id])? > 0)
    }

    fn webhook_enabled_at(&mut self, id: &str, at_ms: i64) -> Result<()> {
        self.run(sql::WEBHOOK_ENABLED_AT, &[&id, &at_ms])?;
        Ok(())
    }

    fn webhook_outcome(
        &mut self,
        id: &str,
        ok: bool,
        disable_after: u32,
    ) -> Result<Option<Outcome>> {
        let disable_after = i64::from(disable_after);
        self.row(sql::WEBHOOK_OUTCOME, &[&id, &ok, &disable_after])
    }

    fn webhook_card(&mut self, id: &str) -> Result<Option<CardRow>> {
        self.row(
            "SELECT CAST(substr(card_msg, 1, ?2) AS TEXT), card_edit_ms, card_claim_ms \
             FROM webhooks WHERE id = ?1",
            &[&id, &MAX_WEBHOOK_TEXT],
        )
    }

    fn claim_webhook_card(
        &mut self,
        id: &str,
        now: i64,
        every_ms: i64,
        until: i64,
    ) -> Result<Option<Option<String>>> {
        // One conditional update: SQLite runs one writer at a time, and
        // PostgreSQL makes a bridge updating the row at once wait for the
        // earlier's commit, then find the condition false.
        self.row(
            sql::CLAIM_WEBHOOK_CARD,
            &[&id, &now, &every_ms, &until, &MAX_WEBHOOK_TEXT],
        )
    }

    fn set_webhook_card(
        &mut self,
        id: &str,
        msg: Option<&str>,
        edit_ms: i64,
        claim: i64,
    ) -> Result<bool> {
        Ok(self.run(sql::SET_WEBHOOK_CARD, &[&id, &msg, &edit_ms, &claim])? > 0)
    }

    fn release_webhook_card(&mut self, id: &str, claim: i64) -> Result<()> {
        self.run(sql::RELEASE_WEBHOOK_CARD, &[&id, &claim])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl WebhookStore {
        /// A status card's row; `None` if the webhook is gone.
        pub(crate) fn card(&self, id: &str) -> Result<Option<CardRow>> {
            self.store().engine().webhook_card(id)
        }
    }

    fn row(id: &str, created_ms: i64) -> WebhookRow {
        WebhookRow {
            id: id.into(),
            spec: "{}".into(),
            secret: "whsec_AAAA".into(),
            enabled: true,
            failures: 0,
            created_ms,
        }
    }

    #[test]
    fn rows_survive_reopening_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let open = || WebhookStore::new(Database::open(Some(dir.path())).unwrap());
        let store = open();
        assert!(store.insert(&row("wh_b", 2), 5).unwrap());
        assert!(store.insert(&row("wh_a", 1), 5).unwrap());
        assert!(!store.insert(&row("wh_c", 1), 2).unwrap(), "at most max");
        assert!(store.insert(&row("wh_a", 3), 5).is_err(), "ids are unique");
        assert!(store.set_state("wh_b", false, 20).unwrap());
        assert!(!store.set_state("wh_gone", false, 1).unwrap());
        drop(store);
        let store = open();
        let rows = store.load().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], row("wh_a", 1), "oldest first");
        assert_eq!((rows[1].enabled, rows[1].failures), (false, 20));
        let (now, every, lease) = (100_000, 10_000, 30_000);
        let claim = now + lease;
        assert_eq!(
            store.claim_card("wh_a", now, every, lease).unwrap(),
            CardClaim::Won { msg: None, claim },
            "no card yet"
        );
        assert!(store.set_card("wh_a", Some("1234"), now, claim).unwrap());
        assert!(!store.set_card("wh_gone", Some("1"), 1, 1).unwrap());
        assert_eq!(
            store.claim_card("wh_gone", now, every, lease).unwrap(),
            CardClaim::Gone
        );
        drop(store);
        let store = open();
        assert_eq!(
            store.claim_card("wh_a", now + every, every, lease).unwrap(),
            CardClaim::Won {
                msg: Some("1234".into()),
                claim: now + every + lease
            }
        );
        assert!(store.delete("wh_a").unwrap());
        assert!(!store.delete("wh_a").unwrap());
        assert_eq!(store.load().unwrap().len(), 1);
    }
}
