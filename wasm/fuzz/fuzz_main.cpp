// libFuzzer entry point of one fuzz target (targets.h): compiled once per target with
// VPCC_FUZZ_TARGET naming its function (wasm/fuzz/CMakeLists.txt), and linked with
// -fsanitize=fuzzer,address,undefined in the VPCC_FUZZ configuration.
#include <cstddef>
#include <cstdint>

#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vpcc::fuzz::VPCC_FUZZ_TARGET(data, size);
  return 0;
}
