//! The admin's webhooks on `/admin` (`docs/protocol.md` §2.4): the form
//! and its request (`form`, pure, checked by the protocol's validation),
//! the form's state as a reducer (`draft`),
//! the admin API's calls (`api`), the section that shows them
//! (`section`) and a status card's preview (`preview`); the players' Web
//! Push subscriptions per source, which the admin can purge (`push`); and
//! how each of them reads its admin answer (`answer`).

pub mod answer;
pub mod api;
pub mod draft;
pub mod form;
pub mod preview;
pub mod push;
pub mod section;
