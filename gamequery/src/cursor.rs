//! A bounds-checked reader over a packet: every read either returns the
//! value or [`DecodeError::Truncated`], never panics.

use crate::{error::DecodeError, limits::clean_bytes};

/// Reads little-endian values and NUL-terminated strings from a byte slice.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// The bytes not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    pub(crate) fn remaining(&self) -> usize {
        self.rest().len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Takes the next `n` bytes.
    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(DecodeError::Truncated(what))?;
        let bytes = self
            .buf
            .get(self.pos..end)
            .ok_or(DecodeError::Truncated(what))?;
        self.pos = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let bytes = self.take(N, what)?;
        <[u8; N]>::try_from(bytes).map_err(|_| DecodeError::Truncated(what))
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn i32(&mut self, what: &'static str) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn f32(&mut self, what: &'static str) -> Result<f32, DecodeError> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }

    /// A NUL-terminated string made fit to show ([`clean_bytes`]): invalid
    /// UTF-8 replaced (servers send whatever their OS uses), control
    /// characters replaced, at most `max_chars` characters. The whole string
    /// is consumed however long it is; a missing NUL is
    /// [`DecodeError::Truncated`].
    pub(crate) fn text(
        &mut self,
        what: &'static str,
        max_chars: usize,
    ) -> Result<String, DecodeError> {
        let rest = self.rest();
        let len = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(DecodeError::Truncated(what))?;
        let bytes = self.take(len, what)?;
        self.take(1, what)?;
        Ok(clean_bytes(bytes, max_chars))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_refuses_past_the_end() {
        let mut c = Cursor::new(&[1, 2, 0, b'a', 0, 7]);
        assert_eq!(c.u16("x").unwrap(), 0x0201);
        assert_eq!(c.text("s", 64).unwrap(), "");
        assert_eq!(c.text("s", 64).unwrap(), "a");
        assert_eq!(c.text("s", 64), Err(DecodeError::Truncated("s")));
        assert_eq!(c.u16("y"), Err(DecodeError::Truncated("y")));
        assert_eq!(c.u8("z").unwrap(), 7);
        assert!(c.is_empty());
        assert_eq!(
            c.take(usize::MAX, "big"),
            Err(DecodeError::Truncated("big"))
        );
    }
}
