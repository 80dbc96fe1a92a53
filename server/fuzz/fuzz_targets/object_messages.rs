//! cargo-fuzz target: any bytes through `holoquic_proto::fuzzing::object_messages` (its doc says what is
//! checked); tests/fuzz_corpus.rs of holoquic-proto replays this target's corpus on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| holoquic_proto::fuzzing::object_messages(data));
