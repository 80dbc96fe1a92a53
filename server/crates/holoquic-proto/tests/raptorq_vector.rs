//! The RaptorQ symbols the origin sends must be decodable by the browser's decoder (npm
//! `raptorq`, a different build of the same library). Repair symbols are where builds can
//! disagree (raptorq 2.0 and 1.x do), so this test pins the exact packets the origin's encoder
//! makes for a small object to `docs/vectors/raptorq.json`, and `src/fec/objectDecoder.test.ts`
//! decodes the same file. Regenerate with `HOLOQUIC_REGENERATE_VECTORS=1 cargo test`.

mod common;

use common::vector_path;
use raptorq::{Encoder, ObjectTransmissionInformation};
use std::fmt::Write;

const OBJECT_LENGTH: usize = 3000;
const SYMBOL_SIZE: u16 = 64;
const REPAIR: u32 = 16;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The vector as the origin's encoder makes it: every fourth source symbol lost, 16 repair
/// symbols instead, so the decoder must use repair symbols to succeed.
fn render_vector() -> String {
    let object: Vec<u8> = (0..OBJECT_LENGTH).map(|i| ((i * 7919 + 13) % 251) as u8).collect();
    let oti = ObjectTransmissionInformation::with_defaults(OBJECT_LENGTH as u64, SYMBOL_SIZE);
    let encoder = Encoder::new(&object, oti);
    let mut packets = Vec::new();
    for block in encoder.get_block_encoders() {
        for (esi, packet) in block.source_packets().into_iter().enumerate() {
            if esi % 4 != 1 {
                packets.push(hex(&packet.serialize()));
            }
        }
        for packet in block.repair_packets(0, REPAIR) {
            packets.push(hex(&packet.serialize()));
        }
    }
    let packets = packets.iter().map(|p| format!("    \"{p}\"")).collect::<Vec<_>>().join(",\n");
    format!(
        "{{\n  \"about\": \"RaptorQ packets (sbn u8, esi u24, symbol) made by the origin's encoder for `object`; every 4th source symbol dropped, 16 repair symbols added. Written by server/crates/holoquic-proto/tests/raptorq_vector.rs, decoded by src/fec/objectDecoder.test.ts.\",\n  \"objectLength\": {OBJECT_LENGTH},\n  \"symbolSize\": {SYMBOL_SIZE},\n  \"oti\": \"{}\",\n  \"object\": \"{}\",\n  \"packets\": [\n{packets}\n  ]\n}}\n",
        hex(&oti.serialize()),
        hex(&object)
    )
}

#[test]
fn encoder_matches_the_shared_vector() {
    let rendered = render_vector();
    if std::env::var_os("HOLOQUIC_REGENERATE_VECTORS").is_some() {
        std::fs::write(vector_path("raptorq.json"), &rendered).expect("write vector");
    }
    let stored = std::fs::read_to_string(vector_path("raptorq.json")).expect("docs/vectors/raptorq.json exists");
    assert!(
        stored == rendered,
        "the origin's RaptorQ encoder no longer produces docs/vectors/raptorq.json; a raptorq upgrade \
         may have changed repair symbols, which would break decoding in the browser"
    );
}
