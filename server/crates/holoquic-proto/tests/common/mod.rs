//! Reading the shared test vectors of `docs/vectors/`: one JSON file per subject, read by these
//! tests and by the TypeScript tests alike, so the origin and the player are checked against the
//! same bytes and numbers rather than each against its own copy.

// Every test crate includes this module and uses only some of it.
#![allow(dead_code)]

use std::path::PathBuf;

/// Where `docs/vectors/<name>` is, from this crate's directory.
pub fn vector_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../docs/vectors").join(name)
}

/// The parsed `docs/vectors/<name>`.
pub fn read_vector(name: &str) -> serde_json::Value {
    let path = vector_path(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Bytes written as hex, spaces allowed between them ("01 18 07" or "011807").
pub fn bytes(hex: &str) -> Vec<u8> {
    let digits: Vec<u8> = hex.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let pairs = digits.chunks_exact(2);
    assert!(pairs.remainder().is_empty(), "odd number of hex digits in {hex:?}");
    pairs.map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap_or_else(|_| panic!("not hex: {hex:?}"))).collect()
}
