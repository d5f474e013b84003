//! The bridge's database: the [`store`] over its two engines (the
//! embedded file or PostgreSQL), and the player [`history`] recorded in
//! it.

pub mod history;
pub mod store;
