//! The lobby's WebSocket bridge (`shared/protocol.md` section 2).
