//! Replays the committed fuzzing corpora and crash reproducers of the wire parsers
//! (`server/fuzz/corpus/TARGET/`, `server/fuzz/regressions/TARGET/`) through the same entry
//! points the cargo-fuzz targets call (`holoquic_proto::fuzzing`), on the stable toolchain: every
//! input that ever found a bug stays fixed, and every seed still decodes without a panic.

use std::fs;
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Runs every file of the target's corpus and regressions through `parse`; returns how many
/// corpus files there were (the corpus must not be empty: a moved directory would pass silently).
fn replay(target: &str, parse: fn(&[u8])) -> usize {
    let mut corpus = 0;
    for (kind, required) in [("corpus", true), ("regressions", false)] {
        let dir = fuzz_dir().join(kind).join(target);
        let Ok(entries) = fs::read_dir(&dir) else {
            assert!(!required, "{} is missing", dir.display());
            continue;
        };
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if !path.is_file() || path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                continue;
            }
            let bytes = fs::read(&path).expect("readable corpus file");
            parse(&bytes);
            if kind == "corpus" {
                corpus += 1;
            }
        }
    }
    corpus
}

#[test]
fn h3_frames_corpus_replays() {
    assert!(replay("h3_frames", holoquic_proto::fuzzing::h3_frames) >= 4);
}

#[test]
fn capsules_corpus_replays() {
    assert!(replay("capsules", holoquic_proto::fuzzing::capsules) >= 2);
}

#[test]
fn object_messages_corpus_replays() {
    assert!(replay("object_messages", holoquic_proto::fuzzing::object_messages) >= 4);
}
