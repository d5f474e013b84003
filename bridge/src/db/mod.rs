//! The bridge's database: the [`store`] over its two engines (the
//! embedded file or PostgreSQL), and the player [`history`] recorded in
//! it; [`database`] opens both, with the key secret, before a bridge
//! starts.

pub(crate) mod database;
pub mod history;
pub mod store;
