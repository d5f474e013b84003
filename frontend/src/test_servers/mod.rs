//! The admin page's test servers as data, one job per module: the
//! definition and the frames it sends (`model`), its stored form
//! (`storage`), the add form's validation (`form`), the demo servers
//! (`samples`), the status each connection shows (`phase`) and the
//! tab-wide state as a reducer (`reducer`). Their sockets live in
//! `contexts::test_servers`, which follows `contexts::test_server_flow`.

pub mod form;
pub mod model;
pub mod phase;
pub mod reducer;
pub mod samples;
pub mod storage;

pub use self::{
    model::TestServerDef,
    phase::Phase,
    reducer::{TestServers, TsAction},
};
