//! Page objects: what the tests do on the front end's pages, in the words
//! of the page (rows, filters, sign-in, test-server cards, source tabs,
//! a server's page)
//! rather than selectors. Each is a [`Page`] of its kind: a browser showing
//! that page, which derefs to the [`Browser`] so its own helpers (`click`,
//! `wait_text`, `screenshot`, …) stay at hand.

pub mod admin;
pub mod games;
pub mod list;
pub mod server;

use std::{marker::PhantomData, ops::Deref};

use crate::browser::Browser;

pub use admin::AdminPage;
pub use games::GamesPage;
pub use list::ListPage;
pub use server::ServerPage;

/// A browser showing a page of kind `K` ([`list::List`], [`admin::Admin`],
/// [`games::Games`], [`server::Server`]); the kind's own methods are in
/// its module.
pub struct Page<'a, K> {
    browser: &'a Browser,
    kind: PhantomData<K>,
}

impl<K> Deref for Page<'_, K> {
    type Target = Browser;

    fn deref(&self) -> &Browser {
        self.browser
    }
}

impl<'a, K> Page<'a, K> {
    /// The page `browser` shows already (or will, after an in-app link or
    /// a page load it started).
    pub fn new(browser: &'a Browser) -> Page<'a, K> {
        Page {
            browser,
            kind: PhantomData,
        }
    }

    /// Opens `url` in `browser` and waits until the page is live.
    pub async fn open(browser: &'a Browser, url: &str) -> Page<'a, K> {
        browser.open_live(url).await;
        Page::new(browser)
    }
}
