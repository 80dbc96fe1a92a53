//! QUIC variable-length integers (RFC 9000 §16): the two most significant bits of the first byte
//! give the length (1, 2, 4 or 8 bytes), the remaining bits the value, big-endian.

use crate::DecodeError;

/// An integer below 2^62, the range a QUIC varint can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VarInt(u64);

impl VarInt {
    /// The largest value a varint can carry, 2^62 − 1.
    pub const MAX: u64 = (1 << 62) - 1;

    /// Returns `None` when `value` needs more than 62 bits.
    pub fn new(value: u64) -> Option<Self> {
        (value <= Self::MAX).then_some(Self(value))
    }

    pub fn get(self) -> u64 {
        self.0
    }

    /// Bytes the shortest encoding of this value takes.
    pub fn encoded_len(self) -> usize {
        match self.0 {
            0..=0x3f => 1,
            0x40..=0x3fff => 2,
            0x4000..=0x3fff_ffff => 4,
            _ => 8,
        }
    }

    /// Appends the shortest encoding.
    pub fn encode(self, out: &mut Vec<u8>) {
        let v = self.0;
        match self.encoded_len() {
            1 => out.push(v as u8),
            2 => out.extend_from_slice(&((v as u16) | 0x4000).to_be_bytes()),
            4 => out.extend_from_slice(&((v as u32) | 0x8000_0000).to_be_bytes()),
            _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
        }
    }

    /// Decodes one varint from the start of `input`; returns it and the bytes consumed.
    /// Non-shortest encodings are accepted, as RFC 9000 requires.
    pub fn decode(input: &[u8]) -> Result<(Self, usize), DecodeError> {
        let first = *input.first().ok_or(DecodeError::Incomplete)?;
        let len = 1usize << (first >> 6);
        let bytes = input.get(..len).ok_or(DecodeError::Incomplete)?;
        let mut value = u64::from(first & 0x3f);
        for b in &bytes[1..] {
            value = (value << 8) | u64::from(*b);
        }
        Ok((Self(value), len))
    }
}

/// Appends `value` as a varint. Panics only on values ≥ 2^62, which callers never construct
/// from untrusted input (all such fields are bounded well below).
pub fn put(out: &mut Vec<u8>, value: u64) {
    VarInt::new(value).expect("varint value below 2^62").encode(out);
}

/// A cursor over a byte slice that decodes protocol fields in order.
pub struct Reader<'a> {
    input: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(input: &'a [u8]) -> Self {
        Self { input, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> &'a [u8] {
        &self.input[self.pos..]
    }

    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let (v, n) = VarInt::decode(self.remaining())?;
        self.pos += n;
        Ok(v.get())
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.bytes(1)?[0])
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let out = self.remaining().get(..n).ok_or(DecodeError::Incomplete)?;
        self.pos += n;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // RFC 9000's sample encodings: tests/protocol_vectors.rs, from docs/vectors/protocol.json.

    #[test]
    fn truncated_input_is_incomplete() {
        assert_eq!(VarInt::decode(&[]), Err(DecodeError::Incomplete));
        assert_eq!(VarInt::decode(&[0x9d, 0x7f]), Err(DecodeError::Incomplete));
    }

    #[test]
    fn out_of_range_values_are_refused() {
        assert!(VarInt::new(VarInt::MAX).is_some());
        assert!(VarInt::new(VarInt::MAX + 1).is_none());
    }

    proptest! {
        #[test]
        fn round_trip(value in 0..=VarInt::MAX) {
            let mut out = Vec::new();
            put(&mut out, value);
            prop_assert_eq!(out.len(), VarInt(value).encoded_len());
            prop_assert_eq!(VarInt::decode(&out), Ok((VarInt(value), out.len())));
        }

        #[test]
        fn any_bytes_decode_or_error(bytes in proptest::collection::vec(any::<u8>(), 0..10)) {
            if let Ok((_, n)) = VarInt::decode(&bytes) {
                prop_assert!(n <= bytes.len());
            }
        }
    }
}
