// The collective operations and algorithms sim/comm knows, their names on the command line and in
// nccl-tests logs, and nccl-tests' bus-bandwidth definitions.
//
// Bus bandwidth (NVIDIA/nccl-tests doc/PERFORMANCE.md, ../shared/data/README.md 8a):
//   algbw = S / t, with S the nccl-tests size (the full buffer for all-gather / reduce-scatter);
//   busbw = algbw · factor: all_reduce 2(n−1)/n; all_gather, reduce_scatter, all_to_all (n−1)/n;
//   broadcast and send/recv 1. nccl-tests applies 2(n−1)/n to NVLS all-reduce too (its
//   all_reduce.cu does not know the algorithm), so we do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/comm_params.hpp"

namespace stepsim::comm {

enum class Op { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv };
enum class Algorithm { automatic, ring, tree, nvls, hierarchical, direct };

/// nccl-tests' names without "_perf": all_reduce, all_gather, reduce_scatter, alltoall,
/// broadcast, sendrecv.
std::string to_string(Op op);
std::optional<Op> parse_op(std::string_view name);
std::vector<std::string> op_names();

/// auto, ring, tree, nvls, hierarchical, direct.
std::string to_string(Algorithm algorithm);
std::optional<Algorithm> parse_algorithm(std::string_view name);
std::vector<std::string> algorithm_names();

/// NCCL's spelling (NCCL_PROTO): Simple, LL128, LL. parse_protocol() ignores case, as NCCL does.
std::string to_string(hw::Protocol protocol);
std::optional<hw::Protocol> parse_protocol(std::string_view name);
/// Simple, LL128, LL: the order the tuner tries them in (ties go to the earlier).
std::vector<hw::Protocol> all_protocols();

/// busbw / algbw for `op` over `ranks` ranks (nccl-tests' definitions above). Requires ranks >= 1.
double bus_factor(Op op, int ranks);
/// algbw in bytes/s: bytes / seconds. Requires seconds > 0.
double algorithm_bandwidth(std::int64_t bytes, double seconds);

}  // namespace stepsim::comm
