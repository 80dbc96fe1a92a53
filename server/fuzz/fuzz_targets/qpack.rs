//! cargo-fuzz target: any bytes as the field section of a request's HEADERS frame, through the
//! origin's decoder (QPACK with the static table only, `holoquic_origin::quic::headers`);
//! tests/fuzz_corpus_qpack.rs of holoquic-origin replays this target's corpus on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| holoquic_origin::quic::headers::fuzz_request_block(data));
