//! [`FrameDecoder`] and [`encode_frame`] as a tokio-util codec, for the master
//! and the bridge (feature `codec`).

use bytes::{Buf, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use crate::frame::{encode_frame, DiscardReason, FrameDecoder, Step};

/// What the codec yields: a message's JSON text, or notice that bytes were
/// dropped (so the reader can log it; the stream goes on either way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    Message(Bytes),
    Discarded(DiscardReason),
}

/// A read buffer grown past this by a large frame is not kept for the
/// frames after it: see [`FrameCodec`]'s `decode`.
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// Length-prefix codec; decoding follows the contract's resynchronisation
/// rules, encoding frames any JSON text given as bytes.
#[derive(Debug, Clone, Default)]
pub struct FrameCodec {
    decoder: FrameDecoder,
}

impl FrameCodec {
    /// A codec with the given limits (see [`FrameDecoder::new`]).
    pub fn new(max_len: usize, max_digits: usize) -> Self {
        Self {
            decoder: FrameDecoder::new(max_len, max_digits),
        }
    }
}

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, Self::Error> {
        match self.decoder.step(src) {
            Step::NeedMore { consumed } => {
                src.advance(consumed);
                Ok(None)
            }
            Step::Frame { consumed, json } => {
                let mut frame = src.split_to(consumed);
                frame.truncate(json.end);
                frame.advance(json.start);
                if src.capacity() > KEEP_BUFFER_BYTES {
                    // The buffer a large frame grew (up to the frame bound,
                    // megabytes) would stay with the connection for all
                    // the small frames after it: what follows the frame
                    // moves to a buffer of its own size, and the large one
                    // is freed with the frame.
                    *src = BytesMut::from(&src[..]);
                }
                Ok(Some(Frame::Message(frame.freeze())))
            }
            Step::Discarded { consumed, reason } => {
                src.advance(consumed);
                Ok(Some(Frame::Discarded(reason)))
            }
        }
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, Self::Error> {
        match self.decode(src)? {
            Some(frame) => Ok(Some(frame)),
            None => {
                // A partial frame at the end of the stream can never complete.
                src.clear();
                Ok(None)
            }
        }
    }
}

impl<T: AsRef<[u8]>> Encoder<T> for FrameCodec {
    type Error = std::io::Error;

    fn encode(&mut self, json: T, dst: &mut BytesMut) -> Result<(), Self::Error> {
        let mut out = Vec::new();
        encode_frame(json.as_ref(), &mut out);
        dst.extend_from_slice(&out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_split_stream() {
        let mut codec = FrameCodec::default();
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in [&b"17{\"Hallo\""[..], b":\"Welt\"}\nxx\n3{}", b"\n"] {
            buf.extend_from_slice(chunk);
            while let Some(f) = codec.decode(&mut buf).unwrap() {
                out.push(f);
            }
        }
        assert_eq!(
            out,
            vec![
                Frame::Message(Bytes::from_static(br#"{"Hallo":"Welt"}"#)),
                Frame::Discarded(DiscardReason::Garbage),
                Frame::Message(Bytes::from_static(b"{}")),
            ]
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn a_large_frame_does_not_leave_its_buffer_behind() {
        let mut codec = FrameCodec::new(4 << 20, 8);
        let json = format!("[{}]", "1,".repeat(1 << 20) + "1");
        let mut buf = BytesMut::new();
        let mut framed = Vec::new();
        encode_frame(json.as_bytes(), &mut framed);
        buf.extend_from_slice(&framed);
        buf.extend_from_slice(b"3{}\n3{");
        assert!(buf.capacity() > KEEP_BUFFER_BYTES);
        let frame = codec.decode(&mut buf).unwrap();
        assert_eq!(frame, Some(Frame::Message(Bytes::from(json))));
        assert_eq!(&buf[..], b"3{}\n3{", "what follows the frame is kept");
        assert!(buf.capacity() < 1024, "capacity {}", buf.capacity());
        assert_eq!(
            codec.decode(&mut buf).unwrap(),
            Some(Frame::Message(Bytes::from_static(b"{}")))
        );
    }

    #[test]
    fn encodes() {
        let mut buf = BytesMut::new();
        FrameCodec::default().encode(b"{}", &mut buf).unwrap();
        assert_eq!(&buf[..], b"3{}\n");
    }
}
