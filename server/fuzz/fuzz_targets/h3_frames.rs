//! cargo-fuzz target: any bytes through `holoquic_proto::fuzzing::h3_frames` (its doc says what is
//! checked); tests/fuzz_corpus.rs of holoquic-proto replays this target's corpus on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| holoquic_proto::fuzzing::h3_frames(data));
