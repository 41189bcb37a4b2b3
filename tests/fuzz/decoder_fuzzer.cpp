// libFuzzer entry point for the frame decoders: each input goes through the header check, the
// directive and envelope decoders and a Connection (decoder_input.hpp); a broken promise or an
// exception other than WireError / NotYetKnown escapes and ends the run with the input saved.
//
//   DPS_FUZZ_SEEDS=corpus ./decoder_fuzzer -runs=100000 corpus    # writes the valid frames first
#include "decoder_input.hpp"

#include <cstdint>
#include <cstdlib>

namespace {

dps::fuzz::DecoderTargets& targets() {
  static dps::fuzz::DecoderTargets t;
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("DPS_FUZZ_SEEDS")) targets().write_corpus(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Written in about three pieces, so the Connection also sees frames split across reads.
  targets().feed(std::as_bytes(std::span(data, size)), true, size / 3 + 1, size % 2 == 0);
  return 0;
}
