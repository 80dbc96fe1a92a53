// libFuzzer target: any byte string as a segment, through parsing, atlas decoding,
// reconstruction and post-processing (decode_input.h). Built with clang and
// -fsanitize=fuzzer,address,undefined by the VPCC_FUZZ configuration (wasm/fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "decode_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vpcc::fuzz::decodeInput(data, size);
  return 0;
}
