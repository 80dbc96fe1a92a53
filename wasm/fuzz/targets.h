// The decoder's fuzz targets, one per stage, each taking any byte string: shared by the
// libFuzzer executables (fuzz_main.cpp, one per target) and the plain replay of the committed
// corpora and regression inputs (replay_main.cpp). Bad input must end in a vpcc::ParseError,
// which each target swallows; any other exception escapes (the caller aborts on it), and memory
// errors are for the sanitizers to catch. Every target bounds the work one input can ask for
// (atlas size, frames, points), so executions stay fast and a run of 10^7 is practical.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vpcc::fuzz {

/// High-level syntax only: the V3C sample stream parsed (VPS, atlas NAL units, parameter sets,
/// tile layers, patch data units, SEI). No atlas decoding.
void parseInput(const uint8_t* data, size_t size);

/// Parsing and atlas decoding as a DecodeSession loads a segment (inter/merge/skip prediction,
/// tiles, stream list), then per frame (at most 4) the patch records, reconstruction parameters
/// and — for atlases of at most 512 × 512 — the block-to-patch map over a fully occupied
/// occupancy picture.
void atlasInput(const uint8_t* data, size_t size);

/// The segment through DecodeSession with pictures made from the input bytes at the sizes it
/// declares (at most 512 × 512; 2 frames, 1 above 128 × 128; occupancy only in the top-left
/// 128 × 128): reconstruction of every tool, post-processing as the SEI asks, the atlas views.
void reconstructInput(const uint8_t* data, size_t size);

/// Post-processing alone on a frame made from the input: up to ~2500 points (positions, 16-bit
/// colours, boundary flags, patch indices) and the smoothing parameters; grid geometry
/// smoothing, colour transfer, attribute smoothing and the RGB conversion.
void postprocessInput(const uint8_t* data, size_t size);

/// The whole segment as the optional HEVC module decodes it: every frame (at most 2, atlases
/// and every HEVC SPS's pictures of at most 128 × 128, checked before libde265 decodes) with
/// its video sub-bitstreams decoded by libde265, picture by picture, reconstructed,
/// post-processed and released. Only in builds with libde265 (VPCC_WITH_DE265).
void streamInput(const uint8_t* data, size_t size);

using Target = void (*)(const uint8_t* data, size_t size);

/// The target of a name ("parse", "atlas", "reconstruct", "postprocess", "stream"), or nullptr
/// (also for "stream" in a build without libde265).
Target targetNamed(const char* name);

}  // namespace vpcc::fuzz
