//! Page objects: what the tests do on the front end's pages, in the words
//! of the page (rows, filters, sign-in, test-server cards, source tabs)
//! rather than selectors. Each wraps a [`Browser`](crate::browser::Browser)
//! showing that page and derefs to it, so the browser's own helpers
//! (`click`, `wait_text`, `screenshot`, …) stay at hand.

pub mod admin;
pub mod games;
pub mod list;

pub use admin::AdminPage;
pub use games::GamesPage;
pub use list::ListPage;
