// The fuzzing harness's one operation, shared by the libFuzzer target (fuzz_decode.cpp) and the
// plain regression replay (replay_main.cpp): treat a byte string as a segment and push it
// through everything the player's decode worker does with one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vpcc::fuzz {

/// Loads `data` as a segment into a DecodeSession, hands it a picture for every video stream
/// (video decoding itself is the browser's or libavcodec's, not ours: the pictures are made
/// from the input bytes, at the sizes the segment declares), then reconstructs and
/// post-processes the first frame and reads the atlas views. Bad input must end in a
/// vpcc::ParseError, which is swallowed; any other exception escapes (the caller aborts on it),
/// and memory errors are for the sanitizers to catch.
void decodeInput(const uint8_t* data, size_t size);

}  // namespace vpcc::fuzz
