//! The live list: where it comes from ([`upstream`]), how each change is
//! numbered once for everyone ([`feed`], [`publish`]), the servers' keys
//! ([`keys`]), the other games' list ([`games`]), and each browser's
//! WebSocket session that is sent it.

pub mod feed;
pub mod games;
pub mod keys;
pub mod publish;
pub(crate) mod session;
pub mod upstream;
