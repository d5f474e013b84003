//! Entry point of the admin's wasm binary (`admin/index.html`): the
//! player's pages and the admin page.

fn main() {
    frontend::start_admin();
}
