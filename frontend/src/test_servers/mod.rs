//! The admin's test servers, one job per module: the definition and the
//! frames it sends (`model`), its stored form (`storage`), the add form's
//! validation (`form`) and the form itself (`add_form`), the demo servers
//! (`samples`), the status each connection shows (`phase`) and the card
//! that shows it (`card`), the tab-wide state as a reducer (`reducer`),
//! one server's socket as a state machine (`flow`), and the app-level
//! provider that owns the sockets and carries out what the flows decide
//! (`provider`). Everything but the components and the provider is tested
//! natively.

pub mod add_form;
pub mod card;
pub mod flow;
pub mod form;
pub mod model;
pub mod phase;
pub mod provider;
pub mod reducer;
pub mod samples;
pub mod storage;

pub use self::{
    model::TestServerDef,
    phase::Phase,
    reducer::{TestServers, TsAction},
};
