//! The admin's webhooks on `/admin` (`docs/protocol.md` §2.4): the form
//! and its request (`form`, pure, checked by the protocol's validation),
//! the admin API's calls (`api`) and the section that shows them
//! (`section`); and the players' Web Push subscriptions per source, which
//! the admin can purge (`push`).

pub mod api;
pub mod form;
pub mod push;
pub mod section;
