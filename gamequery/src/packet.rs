//! A2S framing: single (`-1`) and split (`-2`) packets, in the GoldSource and
//! both Source header layouts, reassembled in any order, bzip2-compressed
//! split replies checked against their size and CRC32.

use std::io::Read;

use serde::{Deserialize, Serialize};

use crate::{cursor::Cursor, error::DecodeError};

/// Header of a reply that fits one packet.
pub const SINGLE: u32 = 0xFFFF_FFFF;
/// Header of one packet of a split reply.
pub const SPLIT: u32 = 0xFFFF_FFFE;
/// Most packets one split reply may have (the 4-bit count of GoldSource; we
/// hold Source to the same bound, which also bounds our memory per reply).
pub const MAX_PACKETS: u8 = 15;
/// Largest decompressed reply we accept; a bigger announced size is refused
/// before decompressing (no bzip2 bombs).
pub const MAX_DECOMPRESSED: u64 = 1 << 20;
/// Set in a Source split reply's ID when the reply is bzip2-compressed.
const COMPRESSED_FLAG: u32 = 0x8000_0000;

/// How a split packet's header after the ID is laid out. Servers do not say
/// which one they use, so [`Reassembler`] tries each unless told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SplitLayout {
    /// Source: total (byte), number (byte), max packet size (short).
    Source,
    /// Early Source engines (and some AppIDs): total and number, no size.
    SourceNoSize,
    /// GoldSource: one byte, upper nibble number, lower nibble total.
    GoldSource,
}

impl SplitLayout {
    /// Every layout, in the order [`Reassembler`] tries them.
    pub const ALL: [SplitLayout; 3] = [Self::Source, Self::SourceNoSize, Self::GoldSource];
}

/// One datagram, classified by its first four bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datagram<'a> {
    /// A whole reply; the bytes after the `-1` header (type byte first).
    Single(&'a [u8]),
    /// One part of a split reply (the whole packet, header included).
    Split(&'a [u8]),
}

/// Classifies a datagram by its header.
pub fn classify(packet: &[u8]) -> Result<Datagram<'_>, DecodeError> {
    let mut c = Cursor::new(packet);
    match c.u32("packet header")? {
        SINGLE => Ok(Datagram::Single(c.rest())),
        SPLIT => Ok(Datagram::Split(packet)),
        other => Err(DecodeError::BadHeader(other)),
    }
}

/// A split packet's header read in one layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SplitHeader {
    id: u32,
    total: u8,
    number: u8,
    payload_at: usize,
}

fn split_id(packet: &[u8]) -> Result<u32, DecodeError> {
    let mut c = Cursor::new(packet);
    c.u32("packet header")?;
    c.u32("split reply ID")
}

fn split_header(layout: SplitLayout, packet: &[u8]) -> Result<SplitHeader, DecodeError> {
    let mut c = Cursor::new(packet);
    c.u32("packet header")?;
    let id = c.u32("split reply ID")?;
    let (total, number) = match layout {
        SplitLayout::GoldSource => {
            let b = c.u8("split packet number")?;
            (b & 0x0F, b >> 4)
        }
        SplitLayout::Source | SplitLayout::SourceNoSize => {
            let total = c.u8("split packet count")?;
            let number = c.u8("split packet number")?;
            if layout == SplitLayout::Source {
                c.u16("split packet size")?;
            }
            (total, number)
        }
    };
    if total == 0 || total > MAX_PACKETS {
        return Err(DecodeError::BadPacketCount(total));
    }
    if number >= total {
        return Err(DecodeError::BadPacketNumber { number, total });
    }
    Ok(SplitHeader {
        id,
        total,
        number,
        payload_at: packet.len() - c.remaining(),
    })
}

/// Reassembles `packets` (whole split packets of one reply, any order) read
/// in `layout`. `Ok(None)`: consistent so far, some packets still missing.
/// The result is the reply after its `-1` header, type byte first.
pub fn assemble(layout: SplitLayout, packets: &[Vec<u8>]) -> Result<Option<Vec<u8>>, DecodeError> {
    let mut slots: Vec<Option<&[u8]>> = Vec::new();
    let mut total = None;
    let mut id = 0;
    for packet in packets {
        let h = split_header(layout, packet)?;
        id = h.id;
        match total {
            None => {
                total = Some(h.total);
                slots = vec![None; usize::from(h.total)];
            }
            Some(t) if t != h.total => return Err(DecodeError::InconsistentCount),
            Some(_) => {}
        }
        let payload = packet.get(h.payload_at..).unwrap_or_default();
        let slot = slots
            .get_mut(usize::from(h.number))
            .ok_or(DecodeError::BadPacketNumber {
                number: h.number,
                total: h.total,
            })?;
        match slot {
            Some(old) if *old != payload => return Err(DecodeError::DuplicatePacket(h.number)),
            _ => *slot = Some(payload),
        }
    }
    if slots.is_empty() || slots.iter().any(Option::is_none) {
        return Ok(None);
    }
    let joined: Vec<u8> = slots.into_iter().flatten().flatten().copied().collect();
    let body = if layout != SplitLayout::GoldSource && id & COMPRESSED_FLAG != 0 {
        decompress(&joined)?
    } else {
        joined
    };
    match classify(&body)? {
        Datagram::Single(reply) => Ok(Some(reply.to_vec())),
        Datagram::Split(_) => Err(DecodeError::BadHeader(SPLIT)),
    }
}

/// Decompresses a compressed split reply: size, CRC32, then bzip2 data.
fn decompress(joined: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mut c = Cursor::new(joined);
    let size = u64::from(c.u32("decompressed size")?);
    let crc = c.u32("CRC32")?;
    if size > MAX_DECOMPRESSED {
        return Err(DecodeError::TooLarge(size));
    }
    let mut out = Vec::new();
    bzip2::read::BzDecoder::new(c.rest())
        .take(size + 1)
        .read_to_end(&mut out)
        .map_err(|e| DecodeError::Decompress(e.to_string()))?;
    let got = out.len() as u64;
    if got != size {
        return Err(DecodeError::SizeMismatch {
            expected: size,
            got,
        });
    }
    let actual = crc32fast::hash(&out);
    if actual != crc {
        return Err(DecodeError::CrcMismatch {
            expected: crc,
            got: actual,
        });
    }
    Ok(out)
}

/// Collects the packets of one reply until it is whole. Feed it every
/// datagram that arrives for one request; a new request needs a new one.
#[derive(Debug, Clone, Default)]
pub struct Reassembler {
    layout: Option<SplitLayout>,
    id: Option<u32>,
    packets: Vec<Vec<u8>>,
}

impl Reassembler {
    /// `layout`: the server's split layout if known; `None` tries all three
    /// and keeps the one that fits.
    pub fn new(layout: Option<SplitLayout>) -> Self {
        Self {
            layout,
            id: None,
            packets: Vec::new(),
        }
    }

    /// Takes one datagram. `Ok(Some(reply))` once the reply is whole (type
    /// byte first); `Ok(None)` while parts are missing.
    pub fn push(&mut self, packet: &[u8]) -> Result<Option<Vec<u8>>, DecodeError> {
        match classify(packet)? {
            Datagram::Single(reply) => Ok(Some(reply.to_vec())),
            Datagram::Split(packet) => {
                let id = split_id(packet)?;
                if let Some(expected) = self.id {
                    if expected != id {
                        return Err(DecodeError::MismatchedId { expected, got: id });
                    }
                }
                self.id = Some(id);
                if self.packets.iter().any(|p| p == packet) {
                    return Ok(None);
                }
                if self.packets.len() >= usize::from(MAX_PACKETS) {
                    return Err(DecodeError::TooManyPackets);
                }
                self.packets.push(packet.to_vec());
                self.try_complete()
            }
        }
    }

    fn try_complete(&self) -> Result<Option<Vec<u8>>, DecodeError> {
        if let Some(layout) = self.layout {
            return assemble(layout, &self.packets);
        }
        let mut viable = false;
        // A layout whose headers fit but whose payload is bad says more
        // than "no layout fits": keep that error.
        let mut payload_error = None;
        for layout in SplitLayout::ALL {
            match assemble(layout, &self.packets) {
                Ok(Some(reply)) => return Ok(Some(reply)),
                Ok(None) => viable = true,
                Err(
                    e @ (DecodeError::CrcMismatch { .. }
                    | DecodeError::SizeMismatch { .. }
                    | DecodeError::Decompress(_)
                    | DecodeError::TooLarge(_)),
                ) => {
                    payload_error.get_or_insert(e);
                }
                Err(_) => {}
            }
        }
        match (viable, payload_error) {
            (true, _) => Ok(None),
            (false, Some(e)) => Err(e),
            (false, None) => Err(DecodeError::UnknownLayout),
        }
    }
}

/// Reassembles a complete set of datagrams (any order), as a test or a
/// fuzzer would: the reply, or why not. Missing packets are
/// [`DecodeError::Missing`].
pub fn reassemble(packets: &[&[u8]], layout: Option<SplitLayout>) -> Result<Vec<u8>, DecodeError> {
    let mut r = Reassembler::new(layout);
    for packet in packets {
        if let Some(reply) = r.push(packet)? {
            return Ok(reply);
        }
    }
    Err(DecodeError::Missing("split packets"))
}

/// Builds split packets for `reply` (the whole reply including its `-1`
/// header), as a server would: for tests and fake servers. `compress`
/// applies only to the Source layouts.
pub fn split(
    reply: &[u8],
    id: u32,
    layout: SplitLayout,
    chunk: usize,
    compress: bool,
) -> Vec<Vec<u8>> {
    let compressed = compress && layout != SplitLayout::GoldSource;
    let body = if compressed {
        let mut out = Vec::new();
        out.extend_from_slice(&(reply.len() as u32).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(reply).to_le_bytes());
        let mut enc = bzip2::read::BzEncoder::new(reply, bzip2::Compression::best());
        let _ = enc.read_to_end(&mut out);
        out
    } else {
        reply.to_vec()
    };
    let id = if compressed {
        id | COMPRESSED_FLAG
    } else {
        id & !COMPRESSED_FLAG
    };
    let chunks: Vec<&[u8]> = body.chunks(chunk.max(1)).collect();
    let total = chunks.len() as u8;
    chunks
        .iter()
        .enumerate()
        .map(|(n, part)| {
            let mut p = SPLIT.to_le_bytes().to_vec();
            p.extend_from_slice(&id.to_le_bytes());
            let n = n as u8;
            match layout {
                SplitLayout::GoldSource => p.push((n << 4) | (total & 0x0F)),
                SplitLayout::Source => {
                    p.extend_from_slice(&[total, n]);
                    p.extend_from_slice(&1248u16.to_le_bytes());
                }
                SplitLayout::SourceNoSize => p.extend_from_slice(&[total, n]),
            }
            p.extend_from_slice(part);
            p
        })
        .collect()
}
