//! The master's stream framing: [`FrameDecoder`] and the tokio codec
//! [`FrameCodec`] on arbitrary streams and limits.

use bytes::BytesMut;
use protocol::{
    codec::{Frame, FrameCodec},
    frame::{frame as encode, DiscardReason, FrameDecoder, Step},
};
use tokio_util::codec::Decoder;

use crate::input::chunks;

type Item = Result<Vec<u8>, DiscardReason>;

/// Input: a byte for the frame limit, one for the length field's digits,
/// one that chooses the chunking, then the stream.
///
/// Checks: the decoder never panics, never keeps more than
/// [`FrameDecoder::max_buffered`] bytes between reads, always makes
/// progress, yields frames within the limit; the same stream gives the
/// same frames whole or in chunks, through the state machine or the codec;
/// and the stream itself, framed with `encode_frame`, comes back whole.
pub fn frame(data: &[u8]) {
    let [len_byte, digits_byte, chunk_seed, stream @ ..] = data else {
        return;
    };
    // Small limits reach the oversize and too-long paths; the high bit the
    // master's real ones.
    let (max_len, max_digits) = if len_byte & 0x80 != 0 {
        (protocol::MAX_FRAME_LEN, protocol::frame::MAX_LENGTH_DIGITS)
    } else {
        (
            1 + usize::from(len_byte % 64),
            1 + usize::from(digits_byte % 6),
        )
    };
    let decoder = || FrameDecoder::new(max_len, max_digits);
    let whole = steps(decoder(), &[stream]);
    let chunked = chunks(stream, *chunk_seed);
    assert_eq!(steps(decoder(), &chunked), whole, "chunking changed frames");
    assert_eq!(
        codec(FrameCodec::new(max_len, max_digits), &chunked),
        whole,
        "the codec disagrees with the decoder"
    );
    for item in whole.iter().flatten() {
        assert!(item.len() < max_len, "a frame over the limit");
    }
    // Anything framed comes back as itself, when it fits the limits and
    // does not start with a digit (which would read as part of the length;
    // a message is an object, so it never does).
    let framed_len = stream.len() + 1;
    if framed_len <= max_len
        && framed_len.to_string().len() <= max_digits
        && !stream.first().is_some_and(u8::is_ascii_digit)
    {
        assert_eq!(
            steps(decoder(), &[&encode(stream)]),
            vec![Ok(stream.to_vec())],
            "an encoded frame did not decode to itself"
        );
    }
}

/// Runs the state machine over `chunks` as a reader would, checking each
/// step, and returns what it yielded.
fn steps(mut dec: FrameDecoder, chunks: &[&[u8]]) -> Vec<Item> {
    let mut out = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        // Every step consumes a byte or changes state; twice the buffer is
        // plenty. More means the decoder is stuck.
        let mut budget = 2 * buf.len() + 4;
        loop {
            budget = budget
                .checked_sub(1)
                .expect("the decoder makes no progress");
            match dec.step(&buf) {
                Step::NeedMore { consumed } => {
                    assert!(consumed <= buf.len());
                    buf.drain(..consumed);
                    assert!(
                        buf.len() <= dec.max_buffered(),
                        "{} bytes kept, limit {}",
                        buf.len(),
                        dec.max_buffered()
                    );
                    break;
                }
                Step::Frame { consumed, json } => {
                    assert!(json.start <= json.end && json.end < consumed);
                    assert!(consumed <= buf.len());
                    out.push(Ok(buf[json].to_vec()));
                    buf.drain(..consumed);
                }
                Step::Discarded { consumed, reason } => {
                    assert!(consumed <= buf.len());
                    out.push(Err(reason));
                    buf.drain(..consumed);
                }
            }
        }
    }
    out
}

/// The codec over the same chunks, then the end of the stream.
fn codec(mut codec: FrameCodec, chunks: &[&[u8]]) -> Vec<Item> {
    let mut out = Vec::new();
    let mut buf = BytesMut::new();
    let mut push = |frame| {
        out.push(match frame {
            Frame::Message(bytes) => Ok(bytes.to_vec()),
            Frame::Discarded(reason) => Err(reason),
        })
    };
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(frame) = codec.decode(&mut buf).expect("the codec never errs") {
            push(frame);
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf).expect("the codec never errs") {
        push(frame);
    }
    assert!(buf.is_empty(), "bytes left after the end of the stream");
    out
}
