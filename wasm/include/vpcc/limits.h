// Decoder limits: how large an atlas a stream may declare (per the V-PCC level it claims, and
// this decoder's own cap), and how many bytes of decoded pictures a decoding session may hold.
// Every limit is checked before the memory it bounds is allocated, and a stream beyond one is
// refused with a ParseError that says which limit and why.
//
// Levels (ISO/IEC 23090-5 Annex A, Table A-6, "MaxAtlasSize"): ptl_level_idc is 30 × the level
// number (1.0 → 30, 1.5 → 45, … 3.5 → 105). The atlas sample count (width × height of the ASPS
// and of each VPS atlas) must not exceed the level's MaxAtlasSize:
//   levels 1.0 and 1.5:  2 228 224 samples (e.g. 2048 × 1088)
//   levels 2.0 and 2.5:  8 912 896 samples (e.g. 4096 × 2176)
//   levels 3.0 and 3.5: 35 651 584 samples (e.g. 8192 × 4352)
// On top of that this decoder refuses atlases above kDecoderMaxAtlasSamples (4096 × 4096), a
// level 3 stream included: one 16-bit 4:2:0 picture of that size is 48 MiB, and a frame needs
// up to five (occupancy, two geometry and two attribute maps) inside the wasm module's 2 GiB.
// A ptl_level_idc that names no level is held to that cap alone.
//
// The caller may name a level too: the one the manifest declares for the stream (docs/mpd.md,
// `hq:v3cLevelIdc`), which the player budgets its memory by. A stream whose atlas exceeds that
// level's MaxAtlasSize is refused the same way, whatever level the stream itself declares.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vpcc/syntax.h"

namespace vpcc {

/// The largest atlas this decoder accepts whatever the level says: 4096 × 4096 samples.
constexpr uint64_t kDecoderMaxAtlasSamples = 4096ull * 4096ull;

/// Bytes of decoded pictures (16-bit samples, every plane) a DecodeSession holds at most by
/// default: pictures of frames given and not yet released. Twenty pictures of the largest atlas
/// fit; the player's look-ahead of a few frames of a typical 512 × 512 atlas takes ~ 20 MiB.
constexpr size_t kDefaultPictureBudgetBytes = size_t(1) << 30;

/// MaxAtlasSize of the level `levelIdc` names (Table A-6), or 0 when it names none.
uint64_t levelMaxAtlasSize(uint8_t levelIdc);

/// The largest atlas sample count a stream with this profile, tier and level may declare here:
/// its level's MaxAtlasSize, never above kDecoderMaxAtlasSamples.
uint64_t maxAtlasSamples(const ProfileTierLevel& ptl);

/// Throws ParseError when a `what` ("VPS atlas", "ASPS") of width × height exceeds
/// maxAtlasSamples(ptl), or the MaxAtlasSize of `manifestLevel` (a level idc; 0: the manifest
/// declares none). Call before anything is sized by the atlas.
void checkAtlasSize(const ProfileTierLevel& ptl, uint32_t width, uint32_t height, const char* what, uint8_t manifestLevel = 0);

/// The lowest level idc whose MaxAtlasSize holds `samples` (what an encoder declares).
uint8_t lowestLevelFor(uint64_t samples);

}  // namespace vpcc
