//! What the bridge answers over HTTP: the accept loop, each connection
//! and their caps (`accept`, `limits`), the `/api/` answers (`api`, `history_api`; what an
//! answer is and how it is kept: `answers`; a server's state they read: `state`), badges and
//! cards (`face`, `badge`, `card`), the pages and the front end's files
//! (`pages`, the documents they keep: `documents`, [`assets`]), the WebSocket upgrade (`upgrade`), `/healthz` and
//! `/metrics` (`status`), and the checks made of a request ([`origin`],
//! [`forwarded`]).

pub(crate) mod accept;
pub(crate) mod answers;
pub(crate) mod api;
pub mod assets;
pub(crate) mod badge;
pub(crate) mod card;
mod connection;
pub(crate) mod documents;
pub(crate) mod error;
pub(crate) mod face;
pub mod forwarded;
pub(crate) mod history_api;
pub(crate) mod json_api;
pub(crate) mod limits;
pub(crate) mod markup;
pub mod origin;
pub(crate) mod pages;
pub(crate) mod state;
pub(crate) mod status;
pub(crate) mod upgrade;
