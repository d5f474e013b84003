//! Errors: [`DecodeError`] for packets a server got wrong (the pure decoders),
//! [`QueryError`] for a whole query (network, time-outs, and decode errors).

use std::net::SocketAddr;

use crate::limits::clean_text;

/// Why a packet or a reassembled reply could not be read. Always the
/// server's fault (or the network's), never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("the packet ends inside the {0}")]
    Truncated(&'static str),
    #[error("unknown packet header {0:#010x} (expected -1 or -2)")]
    BadHeader(u32),
    #[error("expected a {expected:?} reply, got type byte {got:#04x}")]
    UnexpectedType { expected: &'static str, got: u8 },
    #[error("split packet count {0} is outside 1..=15")]
    BadPacketCount(u8),
    #[error("split packet number {number} is not below the packet count {total}")]
    BadPacketNumber { number: u8, total: u8 },
    #[error("split packet of reply {got:#010x} arrived while reassembling {expected:#010x}")]
    MismatchedId { expected: u32, got: u32 },
    #[error("split packets of one reply disagree on the packet count")]
    InconsistentCount,
    #[error("split packet number {0} arrived twice with different contents")]
    DuplicatePacket(u8),
    /// More packets than one reply may have (15 A2S split packets, 16
    /// GameAgent player packets).
    #[error("more packets than one reply may have")]
    TooManyPackets,
    /// A GameAgent server's packet longer than the engine ever sends.
    #[error("a packet longer than {0} bytes")]
    PacketTooLarge(usize),
    #[error("no split-packet layout (Source, Source without size, GoldSource) fits these packets")]
    UnknownLayout,
    #[error("the decompressed reply would be {0} bytes, over the limit")]
    TooLarge(u64),
    #[error("the bzip2 data is corrupt: {0}")]
    Decompress(String),
    #[error("decompressed {got} bytes where the header announced {expected}")]
    SizeMismatch { expected: u64, got: u64 },
    #[error("CRC32 {got:#010x} of the decompressed reply does not match {expected:#010x}")]
    CrcMismatch { expected: u32, got: u32 },
    #[error("{0} bytes left over after the last record")]
    TrailingBytes(usize),
    #[error("invalid {field}: {value:?}")]
    InvalidField { field: &'static str, value: String },
    #[error("the reply has no {0}")]
    Missing(&'static str),
}

/// Why a query returned nothing usable.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// Every attempt timed out (the server is down, or drops our packets).
    #[error("no reply from {addr} after {attempts} attempt(s)")]
    Timeout { addr: SocketAddr, attempts: u32 },
    /// The last attempt got a reply that could not be read.
    #[error("malformed reply from {addr}: {source}")]
    Decode {
        addr: SocketAddr,
        #[source]
        source: DecodeError,
    },
    /// The server answered every challenge with yet another challenge.
    #[error("{0} keeps answering with a new challenge")]
    ChallengeLoop(SocketAddr),
    /// Our side failed: no socket, no route.
    #[error("network error talking to {addr}: {source}")]
    Io {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// Characters of a server's text an [`DecodeError::InvalidField`] keeps.
const INVALID_VALUE_CHARS: usize = 64;

impl DecodeError {
    /// [`DecodeError::InvalidField`] with `value` cut to a few dozen
    /// characters and cleaned ([`crate::limits::clean_text`]): the error's
    /// text may be shown, and the server chose the value.
    pub fn invalid(field: &'static str, value: &str) -> Self {
        Self::InvalidField {
            field,
            value: clean_text(value, INVALID_VALUE_CHARS),
        }
    }

    /// The same reason without anything the server wrote (field values are
    /// the server's text, which may name an address).
    pub fn without_server_text(&self) -> String {
        match self {
            Self::InvalidField { field, .. } => format!("invalid {field}"),
            other => other.to_string(),
        }
    }
}

impl QueryError {
    /// The server the query went to.
    pub fn addr(&self) -> SocketAddr {
        match self {
            Self::Timeout { addr, .. }
            | Self::Decode { addr, .. }
            | Self::ChallengeLoop(addr)
            | Self::Io { addr, .. } => *addr,
        }
    }

    /// The reason without the server's address (nor text it sent), for
    /// viewers who must not learn where the server is; `Display` has both.
    pub fn without_address(&self) -> String {
        match self {
            Self::Timeout { attempts, .. } => format!("no reply after {attempts} attempt(s)"),
            Self::Decode { source, .. } => {
                format!("malformed reply: {}", source.without_server_text())
            }
            Self::ChallengeLoop(_) => "the server keeps answering with a new challenge".to_owned(),
            Self::Io { source, .. } => format!("network error: {}", io_reason(source)),
        }
    }
}

/// An I/O error's kind ("connection refused"), never its message, which
/// may be free text that names the peer.
fn io_reason(e: &std::io::Error) -> String {
    e.kind().to_string()
}
