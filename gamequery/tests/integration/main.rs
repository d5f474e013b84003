//! The game queries' integration tests, one binary (each file a module):
//! the parsers against the packet fixtures and hostile bytes, and the
//! pollers against fake servers over loopback UDP.

mod hostile;
mod malformed;
mod seeds;
mod udp;
