// What stepsim accepts, in one place. Past these a run would not end in seconds or fit in this
// machine's memory, or an integer would overflow; readers refuse such a value where it is written
// (exit 2), naming the value, the limit and the option that raises it. Each default sits far
// above what real training uses; `stepsim --limit NAME=N` moves one for a run, up to a ceiling
// that keeps the integers the simulator computes with in range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stepsim::config {

struct Limit {
  int id;                 ///< index into the process's current values (limits.cpp)
  const char* name;       ///< for `stepsim --limit NAME=N`
  const char* what;       ///< "GPUs in a cluster"
  std::int64_t max;       ///< largest accepted value by default
  std::int64_t ceiling;   ///< the most --limit may raise it to
  const char* why;        ///< what the limit protects, for the message
};

/// 4x the largest clusters planned for (16,384 GPUs); routes and ranks grow with it. Ceiling:
/// GPU ids and nodes × GPUs per server are ints.
inline constexpr Limit kMaxGpus{0, "gpus", "GPUs in a cluster", 65'536, std::int64_t{1} << 30,
                                "the cluster's graph and routes grow with it"};
/// 2^22 tokens: 4x the longest context trained at scale; attention FLOPs grow with its square.
/// Ceiling: s² stays inside int64 with room for the batch and heads.
inline constexpr Limit kMaxSeqLen{1, "seq_len", "tokens per sequence", 4'194'304, std::int64_t{1} << 26,
                                  "attention work and step time grow with its square"};
/// Every microbatch is simulated pass by pass, so time and memory grow with the count (and a
/// little faster: more passes in flight); 4,096 covers a global batch of 4,096 sequences at
/// micro-batch 1 on one replica. What it costs at the limit is measured in the issue notes.
/// Ceiling: pass indices are ints.
inline constexpr Limit kMaxMicrobatches{2, "microbatches", "microbatches per step", 4'096, std::int64_t{1} << 24,
                                        "each one is simulated pass by pass"};

/// Engine events of one simulated step (a task's start or finish, a rate change): the engine
/// processes them one after another, ~2-5 M per CPU second (`stepsim bench engine`), so 10^9 is a
/// few minutes. The largest shipped validation runs need ~5 M. Ceiling: the counter is 64-bit.
inline constexpr Limit kMaxEvents{3, "events", "engine events in one simulated step", 1'000'000'000,
                                  std::int64_t{1} << 62, "they are processed one after another"};
/// Memory the process holds while it builds and runs a step, in GiB (its resident set, read from
/// the OS as it grows). Past it the run stops with this message instead of running the machine
/// out of memory; the largest shipped validation run holds under 3 GiB. Ceiling: 1 TiB.
inline constexpr Limit kMaxMemoryGib{4, "memory_gib", "GiB of memory held while simulating", 8, 1024,
                                     "a plan's tasks, flows and routes live in memory until its step ends"};

/// Slices of one `--trace` file: some 200 bytes of JSON each, so 4 M is about 800 MB, past what a
/// browser tab running Perfetto opens; `--trace-ranks` keeps a few ranks' slices. Ceiling: 2^31.
inline constexpr Limit kMaxTraceSlices{5, "trace_slices", "slices in one trace", 4'000'000, std::int64_t{1} << 31,
                                       "a trace that large does not open in a viewer"};

/// 1234567 -> "1,234,567": the counts of limit messages.
std::string with_commas(std::int64_t value);

/// The largest value accepted in this run: limit.max unless set_limit() moved it.
std::int64_t limit_value(const Limit& limit);
/// Moves the limit named `name` for the rest of the process (the command line does, before any
/// file is read). Returns what is wrong ("unknown limit ...", "above the ceiling ..."), or nothing.
std::optional<std::string> set_limit(std::string_view name, std::int64_t value);
/// Back to the defaults (tests).
void reset_limits();

/// "expected at most 65,536 GPUs in a cluster (...), found 1,000,000<found_detail>; `stepsim
/// --limit gpus=N` raises the limit" (found_detail: " servers", " = global_batch / ...").
std::string over_limit(const Limit& limit, std::int64_t found, std::string_view found_detail = {});

}  // namespace stepsim::config
