// An nccl-tests log as pasted (sim/comm/nccl_log.hpp).
#include "sim/comm/nccl_log.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return stepsim::fuzz::read_or_refuse(data, size, [](const std::string& text) {
    const auto log = stepsim::comm::parse_nccl_log(text, "fuzz.txt");
    if (log.ranks > 0) stepsim::comm::shape_for(log);
  });
}
