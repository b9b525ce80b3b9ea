// The libFuzzer entry point of one target, chosen at build time
// (FLOTILLA_FUZZ_TARGET, the target's name; fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const flotilla::fuzz::Target* target = flotilla::fuzz::FindTarget(FLOTILLA_FUZZ_TARGET);
  if (target == nullptr) flotilla::fuzz::Broken("no such target", FLOTILLA_FUZZ_TARGET);
  target->run({data, size});
  return 0;
}
