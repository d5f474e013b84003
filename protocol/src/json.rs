//! Writing the protocol's own messages as JSON.

use serde::Serialize;

/// The JSON text of one of this crate's message types. serde_json fails only
/// on maps with non-string keys or a `Serialize` impl that errors, and no
/// message type has either (every one is serialised by the tests), so an
/// error here is a bug in a type: it panics with that said rather than
/// sending an empty frame that hides it.
///
/// The text is as long as it needs: a whole list's grows by doubling while
/// it is written, and would keep up to twice its size for as long as it is
/// published.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    match serde_json::to_string(value) {
        Ok(mut json) => {
            if json.capacity() - json.len() > SLACK_KEPT {
                json.shrink_to_fit();
            }
            json
        }
        Err(e) => panic!("a protocol message failed to serialise (a bug in its type): {e}"),
    }
}

/// Growth room [`to_string`] leaves in a text: a message of a few changes
/// is not reallocated for it.
const SLACK_KEPT: usize = 4096;

/// [`to_string`] as bytes.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    to_string(value).into_bytes()
}

/// Bytes of `value`'s compact JSON, counted without building it: what a
/// budget of bytes needs to know before it takes something in.
/// `usize::MAX` if it cannot be written (then it fits no budget).
pub fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    /// Counts what is written, keeping nothing.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_keeps_no_growth_room() {
        let long: Vec<u32> = (0..100_000).collect();
        let text = to_string(&long);
        assert!(
            text.capacity() - text.len() <= SLACK_KEPT,
            "{}",
            text.capacity() - text.len()
        );
        assert_eq!(text.len(), json_len(&long));
    }
}
