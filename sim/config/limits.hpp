// What stepsim accepts, in one place. Past these a run would not end in seconds or fit in this
// machine's memory, or an integer would overflow; readers refuse such a value where it is written
// (exit 2), naming the value and the limit. Each limit sits far above what real training uses.
#pragma once

#include <cstdint>
#include <string>

namespace stepsim::config {

struct Limit {
  const char* what;   ///< "GPUs in a cluster"
  std::int64_t max;   ///< largest accepted value
  const char* why;    ///< what the limit protects, for the message
};

/// 4x the largest clusters planned for (16,384 GPUs); routes and ranks grow with it.
inline constexpr Limit kMaxGpus{"GPUs in a cluster", 65'536, "the cluster's graph and routes grow with it"};
/// 2^22 tokens: 4x the longest context trained at scale; attention FLOPs grow with its square.
inline constexpr Limit kMaxSeqLen{"tokens per sequence", 4'194'304, "attention work and step time grow with its square"};
/// Every microbatch is simulated pass by pass, so time and memory grow with the count (and a
/// little faster: more passes in flight); 4,096 covers a global batch of 4,096 sequences at
/// micro-batch 1 on one replica. What it costs at the limit is measured in the issue notes.
inline constexpr Limit kMaxMicrobatches{"microbatches per step", 4'096, "each one is simulated pass by pass"};

/// "expected at most 65,536 GPUs in a cluster (the cluster's graph ...), found 1,000,000".
std::string over_limit(const Limit& limit, std::int64_t found);

}  // namespace stepsim::config
