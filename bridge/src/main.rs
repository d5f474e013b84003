//! `bridge`: serves the front end and relays browsers to the master.
fn main() {}
