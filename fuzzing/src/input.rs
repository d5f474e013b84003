//! Small, seedable layouts for turning the fuzzer's flat bytes into several
//! datagrams or stream chunks. Plain length prefixes rather than `arbitrary`
//! so that real packet dumps can be written as seeds by hand.

/// Splits `data` into datagrams: each is a little-endian `u16` length and
/// that many bytes; a length past the end takes what is left. At most
/// `max` datagrams (the rest is dropped).
pub fn parts(data: &[u8], max: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while out.len() < max {
        let [lo, hi, tail @ ..] = rest else { break };
        let len = usize::from(u16::from_le_bytes([*lo, *hi])).min(tail.len());
        let (part, after) = tail.split_at(len);
        out.push(part);
        rest = after;
    }
    out
}

/// The inverse of [`parts`], for writing seeds.
pub fn join_parts<P: AsRef<[u8]>>(parts: &[P]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        let p = p.as_ref();
        let len = u16::try_from(p.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&p[..usize::from(len)]);
    }
    out
}

/// Cuts `data` into chunks of 1 to 16 bytes, sizes drawn from `seed`: how a
/// socket might deliver a stream.
pub fn chunks(data: &[u8], seed: u8) -> Vec<&[u8]> {
    // xorshift32; any nonzero state.
    let mut state = u32::from(seed) | 0x100;
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let n = (1 + state as usize % 16).min(rest.len());
        let (chunk, after) = rest.split_at(n);
        out.push(chunk);
        rest = after;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_round_trip_and_truncate() {
        let joined = join_parts(&[&b"abc"[..], b"", b"de"]);
        assert_eq!(parts(&joined, 10), vec![&b"abc"[..], b"", b"de"]);
        assert_eq!(parts(&joined, 1), vec![&b"abc"[..]]);
        // A length past the end takes the rest; a lone byte is no part.
        assert_eq!(parts(&[9, 0, b'x', b'y'], 10), vec![&b"xy"[..]]);
        assert!(parts(&[1], 10).is_empty());
    }

    #[test]
    fn chunks_cover_the_input() {
        let data: Vec<u8> = (0..=255).collect();
        for seed in [0, 1, 77, 255] {
            let c = chunks(&data, seed);
            assert!(c.iter().all(|c| (1..=16).contains(&c.len())));
            assert_eq!(c.concat(), data);
        }
    }
}
