//! Entry point of the player's wasm binary (`index.html`): every page
//! but `/admin`.

fn main() {
    frontend::start();
}
