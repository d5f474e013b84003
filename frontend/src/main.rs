//! Entry point of the wasm binary that Trunk builds.

fn main() {
    frontend::start();
}
