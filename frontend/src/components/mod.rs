//! Reusable function components, one per file.

pub mod auth_panel;
pub mod browser_chrome;
pub mod copy_address;
pub mod embed_snippets;
pub mod empty_state;
pub mod filters;
pub mod game_detail;
pub mod game_list;
pub mod game_table;
pub mod header;
pub mod history_graph;
pub mod icon;
pub mod list_table;
pub mod lobby_list;
pub mod lobby_totals;
pub mod notify_me;
pub mod pager;
pub mod server_browser;
pub mod server_row;
pub mod server_table;
pub mod sort_heading;
pub mod source_tabs;
pub mod star;
pub mod status_pill;
pub mod updated_ago;
pub mod week_heatmap;
