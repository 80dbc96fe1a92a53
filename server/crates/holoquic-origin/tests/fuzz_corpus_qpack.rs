//! Replays the committed corpus and crash reproducers of the `qpack` fuzz target
//! (`server/fuzz/corpus/qpack/`, `server/fuzz/regressions/qpack/`) through the same entry point,
//! `holoquic_origin::quic::headers::fuzz_request_block`, on the stable toolchain; and checks the
//! seeds are what they claim: real request field sections the origin decodes.

use std::fs;
use std::path::Path;

use holoquic_origin::quic::headers::{decode_request, fuzz_request_block};

#[test]
fn qpack_corpus_replays() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut corpus = 0;
    let mut connects = 0;
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = fs::read_dir(fuzz.join(kind).join("qpack")) else {
            assert_ne!(kind, "corpus", "the qpack corpus is missing");
            continue;
        };
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if !path.is_file() || path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                continue;
            }
            let bytes = fs::read(&path).expect("readable corpus file");
            fuzz_request_block(&bytes);
            if kind == "corpus" {
                corpus += 1;
                connects += usize::from(decode_request(&bytes).is_some_and(|head| head.method == "CONNECT"));
            }
        }
    }
    assert!(corpus >= 3, "{corpus} qpack seeds");
    assert!(connects >= 1, "no seed is a CONNECT request the origin decodes");
}
