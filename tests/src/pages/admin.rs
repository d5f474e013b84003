//! The admin page (`/admin`): signing in with the bridge's token, the
//! admin's test servers, each a card whose status says whether the master
//! has it ("registered", "reconnecting", "waiting for the master", …), and
//! the webhooks, each a card with its state and last deliveries.

use super::Page;
use crate::{browser::css_str, until};

/// The ten demo servers of the admin page's "Add 10 sample servers".
pub const SAMPLES: [&str; 10] = [
    "Feuerland",
    "轰炸机人",
    "Server von Bösewicht",
    "Nordlicht",
    "Café Bombé",
    "Ледяная арена",
    "桜 Sakura",
    "Dune Runner",
    "Λαβύρινθος",
    "Oasis ☀",
];

/// The card of test server `name`.
pub fn card(name: &str) -> String {
    format!("[data-testid=test-server][data-name={}]", css_str(name))
}

/// The status line of test server `name`'s card.
pub fn card_status(name: &str) -> String {
    format!("{} [data-testid=test-server-status]", card(name))
}

/// The kind of [`AdminPage`].
pub enum Admin {}

/// A browser showing the admin page.
pub type AdminPage<'a> = Page<'a, Admin>;

impl AdminPage<'_> {
    /// Signs in with `token` and waits for the verdict ("Signed in",
    /// "rejected").
    pub async fn sign_in(&self, token: &str, verdict: &str) {
        self.type_into("#admin-token", token).await;
        self.click("#admin-login").await;
        self.wait_text("[data-testid=auth-result]", verdict).await;
    }

    /// Fills the new test server's form without submitting it.
    pub async fn fill_server(&self, name: &str, address: &str, port: &str) {
        self.type_into("#new-name", name).await;
        self.type_into("#new-address", address).await;
        self.type_into("#new-port", port).await;
    }

    /// Adds test server `name` at test.example.org:20500 (it registers on
    /// its own; see [`AdminPage::wait_card`]).
    pub async fn add_test_server(&self, name: &str) {
        self.fill_server(name, "test.example.org", "20500").await;
        self.click("#add-server").await;
    }

    /// Waits until the card of `name` says `words`.
    pub async fn wait_card(&self, name: &str, words: &str) {
        self.wait_text(&card_status(name), words).await;
    }

    /// Clicks the element matching `css` on the card of `name`.
    pub async fn click_on_card(&self, name: &str, css: &str) {
        self.click(&format!("{} {css}", card(name))).await;
    }

    /// Adds the ten [`SAMPLES`] ("Add 10 sample servers").
    pub async fn add_samples(&self) {
        self.click("#add-samples").await;
    }

    /// The words on every test-server card, in page order.
    pub async fn card_words(&self) -> Vec<String> {
        let v = self
            .js(
                "return Array.from(document.querySelectorAll('[data-testid=test-server-status]'))\
                 .map(e => e.textContent.trim());",
            )
            .await;
        serde_json::from_value(v).unwrap_or_default()
    }

    /// Waits until there are `n` cards and all say exactly `words`.
    pub async fn wait_cards(&self, n: usize, words: &str) {
        let what = format!("{n} test-server cards to say {words:?}");
        until(&what, || async {
            let all = self.card_words().await;
            if all.len() == n && all.iter().all(|w| w == words) {
                Ok(())
            } else {
                Err(format!("{all:?}"))
            }
        })
        .await
    }

    /// Waits until some card no longer says "registered" (the page noticed
    /// a fault).
    pub async fn wait_cards_unconfirmed(&self) {
        until("a card to leave 'registered'", || async {
            let all = self.card_words().await;
            if all.iter().any(|w| w != "registered") {
                Ok(())
            } else {
                Err(format!("{all:?}"))
            }
        })
        .await
    }

    /// Fills the new webhook's URL and creates it (the other fields as
    /// they are).
    pub async fn create_webhook(&self, url: &str) {
        self.type_into("#webhook-url", url).await;
        self.click("#create-webhook").await;
    }

    /// Chooses the new webhook's format (`standard`, `discord`,
    /// `discord-card`).
    pub async fn choose_format(&self, format: &str) {
        self.find("#webhook-format")
            .await
            .select_by_value(format)
            .await
            .unwrap_or_else(|e| panic!("choose the format {format}: {e}"));
    }

    /// The secret the page shows once after a creation.
    pub async fn webhook_secret(&self) -> String {
        self.wait_text("[data-testid=webhook-secret-value]", "whsec_")
            .await
    }

    /// Waits until `part` (a selector inside the card: `[data-testid=…]`
    /// or a button's class) of the webhook to `host` says `words`; its
    /// text.
    pub async fn wait_webhook(&self, host: &str, part: &str, words: &str) -> String {
        self.wait_text(&format!("{} {part}", webhook(host)), words)
            .await
    }

    /// Clicks `button` (`send-test`, `toggle`, `delete`, `show-preview`) on the card of
    /// the webhook to `host`.
    pub async fn click_on_webhook(&self, host: &str, button: &str) {
        self.click(&format!("{} .{button}", webhook(host))).await;
    }
}

/// The card of the webhook whose heading names `host`.
pub fn webhook(host: &str) -> String {
    format!(
        "[data-testid=webhook][data-host={}]",
        crate::browser::css_str(host)
    )
}
