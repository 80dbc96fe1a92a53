//! The RaptorQ view of one object for datagram delivery: its source blocks (RFC 6330 partition of
//! `with_defaults`), source symbols cut straight from the object's bytes when they are sent, and
//! repair symbols from block encoders. Building an encoder (the intermediate symbols) is most of
//! the cost of datagram delivery (~12 s of CPU per GB of object on this machine), so it is never
//! done on the QUIC thread, which paces every connection: the loader's builder runs an
//! `EncoderBuild` (as the request starts when repair is planned, when repair is first asked for
//! otherwise), and a repair symbol waits (`is_ready`) until the encoders are installed, while the
//! source symbols, which need none, go out. A request that never needs repair pays nothing.
//! Built encoders are kept in a bounded cache shared by every request for the same object:
//! viewers of a scene fetch the same segments, and each encoder is then built once, not once per
//! viewer.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use raptorq::{calculate_block_offsets, ObjectTransmissionInformation, PayloadId, SourceBlockEncoder};

/// One symbol to send: a source symbol (`index` < K of its block) or a repair symbol whose index
/// counts on from K (the protocol's `next_esi` numbering, docs/protocol.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolRef {
    pub block: u8,
    pub index: u32,
}

/// Encoder memory the cache may hold (an object's encoders take about its size again).
const ENCODER_CACHE_BYTES: usize = 512 << 20;

/// Encoders of recently encoded objects, least recently used first. An object is named by the
/// address of its bytes: the content store hands out the same allocation to every request while
/// it caches the object, and an entry keeps its `Bytes`, so the address cannot be reused by
/// another object while the entry lives.
struct EncoderCache {
    entries: VecDeque<CachedEncoders>,
    bytes: usize,
}

struct CachedEncoders {
    object: Bytes,
    symbol_size: u16,
    encoders: Vec<Arc<SourceBlockEncoder>>,
}

static ENCODER_CACHE: Mutex<EncoderCache> = Mutex::new(EncoderCache { entries: VecDeque::new(), bytes: 0 });
/// Encoders built since start (block encoders), for tests and benchmarks.
static ENCODERS_BUILT: AtomicUsize = AtomicUsize::new(0);

impl CachedEncoders {
    fn is_for(&self, object: &Bytes, symbol_size: u16) -> bool {
        self.symbol_size == symbol_size && self.object.len() == object.len() && self.object.as_ptr() == object.as_ptr()
    }
}

impl EncoderCache {
    fn find(object: &Bytes, symbol_size: u16) -> Option<Vec<Arc<SourceBlockEncoder>>> {
        let mut cache = ENCODER_CACHE.lock().ok()?;
        let at = cache.entries.iter().position(|e| e.is_for(object, symbol_size))?;
        let entry = cache.entries.remove(at)?;
        let encoders = entry.encoders.clone();
        cache.entries.push_back(entry);
        Some(encoders)
    }

    fn remember(object: &Bytes, symbol_size: u16, encoders: Vec<Arc<SourceBlockEncoder>>) {
        let Ok(mut cache) = ENCODER_CACHE.lock() else { return };
        let known = cache.entries.iter().any(|e| e.is_for(object, symbol_size));
        if known || object.len() > ENCODER_CACHE_BYTES / 4 {
            return;
        }
        while cache.bytes + object.len() > ENCODER_CACHE_BYTES {
            let Some(old) = cache.entries.pop_front() else { break };
            cache.bytes -= old.object.len();
        }
        cache.bytes += object.len();
        cache.entries.push_back(CachedEncoders { object: object.clone(), symbol_size, encoders });
    }
}

/// Block encoders built since the process started (each cache hit saves building them again).
pub fn encoders_built() -> usize {
    ENCODERS_BUILT.load(Ordering::Relaxed)
}

pub struct ObjectSymbols {
    object: Bytes,
    oti: ObjectTransmissionInformation,
    /// [start, end) of every source block in the object; `end` may pass the object's end (zero
    /// padding).
    blocks: Vec<(usize, usize)>,
    /// Every block's encoder once built (or found in the cache), else None.
    encoders: Option<Vec<Arc<SourceBlockEncoder>>>,
}

/// Everything needed to build an object's encoders on another thread (see `ObjectSymbols`).
pub struct EncoderBuild {
    object: Bytes,
    oti: ObjectTransmissionInformation,
    blocks: Vec<(usize, usize)>,
}

impl EncoderBuild {
    /// Builds every block's encoder (long: run it on a loader worker) and caches them.
    pub fn run(self) -> Vec<Arc<SourceBlockEncoder>> {
        if let Some(cached) = EncoderCache::find(&self.object, self.oti.symbol_size()).filter(|c| c.len() == self.blocks.len()) {
            return cached;
        }
        let built: Vec<_> = self.blocks.iter().enumerate().map(|(b, &range)| Arc::new(build_encoder(&self.object, &self.oti, range, b))).collect();
        EncoderCache::remember(&self.object, self.oti.symbol_size(), built.clone());
        built
    }
}

impl ObjectSymbols {
    pub fn new(object: Bytes, symbol_size: u16) -> Self {
        let oti = ObjectTransmissionInformation::with_defaults(object.len() as u64, symbol_size);
        let blocks = calculate_block_offsets(&object, &oti);
        let encoders = EncoderCache::find(&object, symbol_size).filter(|cached| cached.len() == blocks.len());
        Self { object, oti, blocks, encoders }
    }

    /// Whether repair symbols can be written now.
    pub fn has_encoders(&self) -> bool {
        self.encoders.is_some()
    }

    /// Builds every block's encoder here and now (never on the QUIC loop).
    #[cfg(test)]
    pub fn build_encoders(&mut self) {
        if self.encoders.is_none() {
            self.encoders = Some(self.encoder_build().run());
        }
    }

    /// What a worker needs to build the encoders; `install_encoders` takes the result.
    pub fn encoder_build(&self) -> EncoderBuild {
        EncoderBuild { object: self.object.clone(), oti: self.oti, blocks: self.blocks.clone() }
    }

    pub fn install_encoders(&mut self, encoders: Vec<Arc<SourceBlockEncoder>>) {
        if encoders.len() == self.blocks.len() {
            self.encoders = Some(encoders);
        }
    }

    /// Whether `symbol` can be written now: a source symbol always, a repair symbol once the
    /// encoders are there.
    pub fn is_ready(&self, symbol: SymbolRef) -> bool {
        symbol.index < self.source_symbols(usize::from(symbol.block)) || self.encoders.is_some()
    }

    pub fn oti(&self) -> ObjectTransmissionInformation {
        self.oti
    }

    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// K: source symbols of `block`.
    pub fn source_symbols(&self, block: usize) -> u32 {
        let (start, end) = self.blocks[block];
        ((end - start) / usize::from(self.oti.symbol_size())) as u32
    }

    /// The ESI carried by `block`'s first repair symbol: K', the block's extended source block
    /// size (RFC 6330 §5.3.1), which raptorq puts on the wire for repair symbol 0.
    pub fn first_repair_esi(&self, block: usize) -> u32 {
        raptorq::extended_source_block_symbols(self.source_symbols(block))
    }

    /// Appends the serialized encoding packet (payload id, then the symbol) of `symbol`; false,
    /// and nothing written, when it is a repair symbol and the encoders are not built yet.
    pub fn write_packet(&self, symbol: SymbolRef, out: &mut Vec<u8>) -> bool {
        let block = usize::from(symbol.block);
        let k = self.source_symbols(block);
        if symbol.index < k {
            out.extend_from_slice(&PayloadId::new(symbol.block, symbol.index).serialize());
            let block_start = self.blocks[block].0;
            // RFC 6330 §4.4.1.2: the block is N sub-blocks of K contiguous sub-symbols each, and
            // source symbol m is the m-th sub-symbol of every sub-block in turn. With N = 1 (every
            // object under ~10 MB) that is simply the object's bytes at m·T.
            let index = symbol.index as usize;
            for (offset, sub_size) in sub_blocks(&self.oti, k as usize) {
                let start = block_start + offset + index * sub_size;
                let end = (start + sub_size).min(self.object.len());
                let have = end.saturating_sub(start);
                out.extend_from_slice(&self.object[start.min(end)..end]);
                out.resize(out.len() + (sub_size - have), 0);
            }
        } else {
            // raptorq numbers repair symbols from 0 and carries K' + n as the ESI (see
            // `first_repair_esi`): repair symbol n is our symbol K + n.
            let Some(encoders) = &self.encoders else { return false };
            let packet = encoders[block].repair_packets(symbol.index - k, 1).pop().expect("one repair packet");
            out.extend_from_slice(&packet.serialize());
        }
        true
    }
}

/// (offset in the block, sub-symbol size) of every sub-block of a block of `k` source symbols:
/// Partition[T/Al, N] gives NL sub-blocks of sub-symbols of TL·Al bytes, then NS of TS·Al.
fn sub_blocks(oti: &ObjectTransmissionInformation, k: usize) -> impl Iterator<Item = (usize, usize)> {
    let alignment = usize::from(oti.symbol_alignment());
    let units = usize::from(oti.symbol_size()) / alignment;
    let n = usize::from(oti.sub_blocks()).max(1);
    let (large, small) = (units.div_ceil(n), units / n);
    let n_large = units - small * n;
    (0..n).scan(0usize, move |offset, i| {
        let size = if i < n_large { large } else { small } * alignment;
        let here = *offset;
        *offset += k * size;
        Some((here, size))
    })
}

fn build_encoder(object: &[u8], oti: &ObjectTransmissionInformation, (start, end): (usize, usize), block: usize) -> SourceBlockEncoder {
    let data: std::borrow::Cow<[u8]> = if end > object.len() {
        let mut padded = object[start..].to_vec();
        padded.resize(end - start, 0);
        padded.into()
    } else {
        object[start..end].into()
    };
    ENCODERS_BUILT.fetch_add(1, Ordering::Relaxed);
    SourceBlockEncoder::new2(block as u8, oti, &data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use raptorq::{Decoder, Encoder, EncodingPacket};

    fn object(len: usize) -> Bytes {
        (0..len).map(|i| (i * 31 % 251) as u8).collect::<Vec<_>>().into()
    }

    #[test]
    fn packets_equal_the_raptorq_encoders() {
        for len in [1, 1000, 64_000, 100_003] {
            let data = object(len);
            let mut symbols = ObjectSymbols::new(data.clone(), 1200);
            symbols.build_encoders();
            let reference = Encoder::new(&data, symbols.oti());
            for (b, encoder) in reference.get_block_encoders().iter().enumerate() {
                let k = symbols.source_symbols(b);
                let expected: Vec<Vec<u8>> =
                    encoder.source_packets().iter().chain(encoder.repair_packets(0, 3).iter()).map(EncodingPacket::serialize).collect();
                let mut got = Vec::new();
                for index in 0..k + 3 {
                    let mut out = Vec::new();
                    symbols.write_packet(SymbolRef { block: b as u8, index }, &mut out);
                    got.push(out);
                }
                assert_eq!(got, expected, "object of {len} bytes, block {b}");
            }
        }
    }

    /// Above ~10 MB `with_defaults` splits each block into sub-blocks, and a source symbol is no
    /// longer a plain slice of the object (what once made a 12 MB datagram object undecodable).
    #[test]
    fn source_symbols_of_sub_blocked_objects_decode() {
        let data = object(12_000_000);
        let symbols = ObjectSymbols::new(data.clone(), 1280);
        assert!(symbols.oti().sub_blocks() > 1, "this size should be sub-blocked: {:?}", symbols.oti());
        let mut decoder = Decoder::new(symbols.oti());
        let mut result = None;
        for block in 0..symbols.block_count() {
            for index in 0..symbols.source_symbols(block) {
                let mut out = Vec::new();
                symbols.write_packet(SymbolRef { block: block as u8, index }, &mut out);
                result = result.or(decoder.decode(EncodingPacket::deserialize(&out)));
            }
        }
        assert!(result.as_deref() == Some(&data[..]), "the source symbols reassemble the object");
    }

    #[test]
    fn encoders_built_elsewhere_give_the_same_repair_symbols() {
        let data = object(300_000);
        let mut here = ObjectSymbols::new(data.clone(), 1200);
        let mut elsewhere = ObjectSymbols::new(Bytes::from(data.to_vec()), 1200);
        let repair = SymbolRef { block: 0, index: here.source_symbols(0) + 5 };
        let mut out = Vec::new();
        assert!(!elsewhere.is_ready(repair) && !elsewhere.write_packet(repair, &mut out) && out.is_empty(), "no encoders yet");
        assert!(elsewhere.is_ready(SymbolRef { block: 0, index: 0 }), "source symbols need none");
        here.build_encoders();
        let build = elsewhere.encoder_build();
        elsewhere.install_encoders(std::thread::spawn(move || build.run()).join().unwrap());
        for block in 0..here.block_count() {
            let index = here.source_symbols(block) + 5;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            assert!(here.write_packet(SymbolRef { block: block as u8, index }, &mut a));
            assert!(elsewhere.write_packet(SymbolRef { block: block as u8, index }, &mut b));
            assert_eq!(a, b);
        }
    }

    /// A second request for the same bytes (the content store shares them) reuses the encoders
    /// the first one built; other bytes of the same content do not.
    #[test]
    fn encoders_are_built_once_per_object() {
        let data = object(200_003);
        let k = |s: &ObjectSymbols| s.source_symbols(0);
        let mut first = ObjectSymbols::new(data.clone(), 1200);
        first.build_encoders();
        let mut a = Vec::new();
        first.write_packet(SymbolRef { block: 0, index: k(&first) + 1 }, &mut a);
        let built = encoders_built();
        let second = ObjectSymbols::new(data.clone(), 1200);
        assert!(second.has_encoders(), "the second request started from the cache");
        let mut b = Vec::new();
        second.write_packet(SymbolRef { block: 0, index: k(&second) + 1 }, &mut b);
        assert_eq!(a, b);
        let copy = Bytes::from(data.to_vec()); // equal bytes, another allocation: not the same object
        let mut third = ObjectSymbols::new(copy, 1200);
        assert!(!third.has_encoders());
        third.build_encoders();
        let mut c = Vec::new();
        third.write_packet(SymbolRef { block: 0, index: k(&third) + 1 }, &mut c);
        assert_eq!(a, c);
        // Tests run in parallel and build encoders too: at least the third one was built.
        assert!(encoders_built() > built, "the copy is encoded afresh");
    }

    /// Repair symbol n carries ESI K' + n: what RESPONSE's `first_repair_esi` tells the client.
    #[test]
    fn repair_symbols_carry_consecutive_esis_from_the_first_repair_esi() {
        let data = object(100_003);
        let mut symbols = ObjectSymbols::new(data, 1200);
        symbols.build_encoders();
        let k = symbols.source_symbols(0);
        let first = symbols.first_repair_esi(0);
        assert!(first >= k);
        for n in 0..4 {
            let mut out = Vec::new();
            symbols.write_packet(SymbolRef { block: 0, index: k + n }, &mut out);
            assert_eq!(EncodingPacket::deserialize(&out).payload_id().encoding_symbol_id(), first + n);
        }
    }

    #[test]
    fn source_and_late_repair_symbols_decode() {
        let data = object(50_000);
        let mut symbols = ObjectSymbols::new(data.clone(), 1000);
        symbols.build_encoders();
        let mut decoder = Decoder::new(symbols.oti());
        let k = symbols.source_symbols(0);
        let mut result = None;
        // Every 7th source symbol lost, replaced by repair symbols.
        for index in (0..k).filter(|i| i % 7 != 0).chain(k..k + k / 7 + 2) {
            let mut out = Vec::new();
            symbols.write_packet(SymbolRef { block: 0, index }, &mut out);
            result = result.or(decoder.decode(EncodingPacket::deserialize(&out)));
        }
        assert_eq!(result.as_deref(), Some(&data[..]));
    }
}
