//! The peer's unidirectional streams, for the session machine (`session.rs`), without I/O: its
//! HTTP/3 control stream (one, SETTINGS first and once, never finished), QPACK streams read and
//! dropped, anything else refused. A broken rule closes the connection.

use std::collections::HashMap;

use holoquic_proto::h3::{error_code, frame_type, stream_type, Frame, Settings};
use holoquic_proto::varint::Reader;
use holoquic_proto::DecodeError;

use super::action::Action;

/// The error code and reason a connection closes with.
pub type ConnectionClose = (u64, &'static str);

enum Uni {
    Unknown(Vec<u8>),
    /// The peer's control stream; SETTINGS seen or not.
    Control {
        buf: Vec<u8>,
        settings: bool,
    },
    /// QPACK streams (nothing we need: our dynamic table capacity is 0): read and dropped.
    Ignored,
    /// WT uni streams (not part of our protocol) and unknown types: refused with STOP_SENDING and
    /// forgotten at once (quiche reports no more data on them).
    Refused,
}

/// The peer's unidirectional streams that are still open.
#[derive(Default)]
pub struct UniStreams {
    peer_control: Option<u64>,
    streams: HashMap<u64, Uni>,
}

impl UniStreams {
    /// Streams we hold state for.
    pub fn len(&self) -> usize {
        self.streams.len()
    }

    /// Whether `id` is the peer's control stream.
    pub fn is_control(&self, id: u64) -> bool {
        Some(id) == self.peer_control
    }

    /// Bytes read from the peer's stream `id` (`fin` when it finished): a refusal is pushed to
    /// `actions`, a broken rule is written to `close`.
    pub fn on_data(&mut self, id: u64, data: &[u8], fin: bool, close: &mut Option<ConnectionClose>, actions: &mut Vec<Action>) {
        self.read(id, data, close, actions);
        if Some(id) == self.peer_control {
            if fin && close.is_none() {
                *close = Some((error_code::H3_CLOSED_CRITICAL_STREAM, "control stream finished"));
            }
        } else if fin || matches!(self.streams.get(&id), Some(Uni::Refused)) {
            // Nothing more comes on it: the peer may open streams for the life of the connection
            // (quiche renews the credit), so their state must not outlive them.
            self.streams.remove(&id);
        }
    }

    fn read(&mut self, id: u64, data: &[u8], close: &mut Option<ConnectionClose>, actions: &mut Vec<Action>) {
        let state = self.streams.entry(id).or_insert_with(|| Uni::Unknown(Vec::new()));
        if let Uni::Unknown(buf) = state {
            buf.extend_from_slice(data);
            let mut r = Reader::new(buf);
            let kind = match r.varint() {
                Ok(k) => k,
                Err(_) => return,
            };
            let rest = r.remaining().to_vec();
            *state = match kind {
                stream_type::CONTROL => {
                    if self.peer_control.is_some() {
                        *close = Some((error_code::H3_STREAM_CREATION_ERROR, "second control stream"));
                        return;
                    }
                    self.peer_control = Some(id);
                    Uni::Control { buf: rest, settings: false }
                }
                stream_type::QPACK_ENCODER | stream_type::QPACK_DECODER => Uni::Ignored,
                _ => {
                    // Unknown types (and WT uni streams, unused by our protocol) are refused politely.
                    actions.push(Action::StopSending { stream: id, code: error_code::H3_STREAM_CREATION_ERROR });
                    Uni::Refused
                }
            };
        } else if let Uni::Control { buf, .. } = state {
            buf.extend_from_slice(data);
        }
        if let Some(Uni::Control { buf, settings }) = self.streams.get_mut(&id) {
            loop {
                match Frame::decode(buf) {
                    Ok((frame, used)) => {
                        if !*settings && frame.kind != frame_type::SETTINGS {
                            *close = Some((error_code::H3_MISSING_SETTINGS, "control stream must start with SETTINGS"));
                            return;
                        }
                        if frame.kind == frame_type::SETTINGS {
                            if *settings {
                                *close = Some((error_code::H3_FRAME_UNEXPECTED, "second SETTINGS"));
                                return;
                            }
                            if Settings::decode(frame.payload).is_err() {
                                *close = Some((error_code::H3_SETTINGS_ERROR, "malformed SETTINGS"));
                                return;
                            }
                            *settings = true;
                        }
                        buf.drain(..used);
                    }
                    // Incomplete frames stay bounded: `Frame::decode` refuses payloads over 64 KiB.
                    Err(DecodeError::Incomplete) => return,
                    Err(_) => {
                        *close = Some((error_code::H3_FRAME_ERROR, "malformed frame on the control stream"));
                        return;
                    }
                }
            }
        }
    }
}
