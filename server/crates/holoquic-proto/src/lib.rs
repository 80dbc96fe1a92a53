//! Sans-IO wire formats of holoquic (see `docs/protocol.md`).
//!
//! Nothing here touches a socket: every type encodes into a `Vec<u8>` and decodes from a byte
//! slice, reporting how many bytes it consumed or that more bytes are needed. The origin feeds
//! these from quiche stream reads; tests feed them arbitrary bytes.

pub mod fec;
pub mod fuzzing;
pub mod h3;
pub mod object;
pub mod path;
pub mod varint;

pub use object::{Delivery, FecMode, Message, ObjectDatagram, Request, Response, ResponseBody};
pub use path::PathReport;
pub use varint::VarInt;

/// Why bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The input ends before the value does; read more and try again.
    #[error("incomplete input: more bytes needed")]
    Incomplete,
    /// The bytes can never form a valid value, however many more arrive.
    #[error("malformed: {0}")]
    Malformed(&'static str),
    /// A length or count exceeds what the protocol allows.
    #[error("over limit: {0}")]
    OverLimit(&'static str),
}
