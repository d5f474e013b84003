//! Reusable function components, one per file.

pub mod add_server_form;
pub mod auth_panel;
pub mod filters;
pub mod header;
pub mod pager;
pub mod server_browser;
pub mod server_row;
pub mod server_table;
pub mod status_pill;
pub mod test_server_card;
pub mod updated_ago;
