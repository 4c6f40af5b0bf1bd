// Synthetic StepResults for report tests: timelines built by arithmetic, not by simulation, so a
// test knows every start and end. Times in microseconds are converted to picoseconds. Header-only
// because the test glob compiles only *_test.cpp files.
#pragma once

#include <string>

#include "sim/plan/step_result.hpp"

namespace stepsim::report::testing {

constexpr std::int64_t kUs = 1'000'000;  // picoseconds per microsecond

struct PipelineShape {
  int tp = 1, pp = 2, dp = 1, microbatches = 4;
  std::int64_t forward_us = 100, backward_us = 200, send_us = 10, tp_us = 5, dp_us = 50, optimizer_us = 30;
  int gpus_per_server = 8;
};

namespace detail {

struct Builder {
  plan::StepResult r;
  std::uint32_t add(int rank, int stream, plan::TaskCategory c, std::string op, int mb, std::int64_t start_us,
                    std::int64_t dur_us, std::vector<std::uint32_t> deps = {}) {
    plan::TaskRecord t;
    t.rank = rank, t.stream = stream, t.category = c, t.op = std::move(op), t.microbatch = mb;
    t.layer = mb < 0 ? -1 : 0;
    t.start_ps = start_us * kUs, t.end_ps = (start_us + dur_us) * kUs;
    t.deps = std::move(deps);
    t.flops = c == plan::TaskCategory::forward ? 1e12 : 0;
    t.bytes = (c == plan::TaskCategory::forward || c == plan::TaskCategory::backward_input) ? 0 : 1e6;
    for (std::size_t k = r.tasks.size(); k-- > 0;)  // the fixture adds each stream's tasks in order
      if (r.tasks[k].rank == rank && r.tasks[k].stream == stream) {
        t.stream_pred = static_cast<std::int64_t>(k);
        break;
      }
    r.tasks.push_back(t);
    return static_cast<std::uint32_t>(r.tasks.size() - 1);
  }
};

}  // namespace detail

/// GPipe on uniform stages. Rank = tp + T·(dp + D·pp) (TP innermost). Stage s runs F(j) from
/// s·(F+send) + j·F; after the last forward ends at E = (p−1)(F+send) + m·F, B(j) on stage s runs
/// from E + (p−1−s)(B+send) + j·B. Sends follow each F (to s+1) and B (to s−1) on stream "pp"
/// (1). Every F/B has a TP all-reduce on stream "tp" (2) at its end when tp > 1; after the last
/// backward a DP reduction (stream "dp", 3) and then the optimizer. Memory: 1 GiB per stored
/// microbatch on top of 10 GiB of model states.
inline plan::StepResult synthetic_pipeline(const PipelineShape& s) {
  using C = plan::TaskCategory;
  detail::Builder b;
  const int p = s.pp, m = s.microbatches, ranks = s.tp * s.pp * s.dp;
  b.r.name = "synthetic-tp" + std::to_string(s.tp) + "-pp" + std::to_string(p) + "-dp" + std::to_string(s.dp);
  b.r.gpus = ranks, b.r.tp = s.tp, b.r.pp = p, b.r.dp = s.dp, b.r.microbatches = m, b.r.schedule = "gpipe";
  const std::int64_t fwd_end = (p - 1) * (s.forward_us + s.send_us) + m * s.forward_us;
  const std::int64_t bwd_end = fwd_end + (p - 1) * (s.backward_us + s.send_us) + m * s.backward_us;
  for (int rank = 0; rank < ranks; ++rank) {
    plan::RankInfo info;
    info.rank = rank, info.gpu = rank % s.gpus_per_server, info.server = rank / s.gpus_per_server;
    info.tp = rank % s.tp, info.dp = (rank / s.tp) % s.dp, info.pp = rank / (s.tp * s.dp);
    info.streams = {"compute", "pp", "tp", "dp"};
    b.r.ranks.push_back(info);
  }
  std::vector<std::vector<std::uint32_t>> fwd_send(ranks, std::vector<std::uint32_t>(m)), bwd_send = fwd_send;
  for (int stage = 0; stage < p; ++stage) {
    for (int rank = 0; rank < ranks; ++rank) {
      auto& info = b.r.ranks[rank];
      if (info.pp != stage) continue;
      const int prev = rank - s.tp * s.dp, next = rank + s.tp * s.dp;
      std::int64_t mem = 10 * 1024;  // MiB
      info.memory.push_back({0, mem << 20});
      std::uint32_t last = 0;
      for (int j = 0; j < m; ++j) {
        const std::int64_t t0 = stage * (s.forward_us + s.send_us) + j * s.forward_us;
        std::vector<std::uint32_t> deps;
        if (stage > 0) deps.push_back(fwd_send[prev][j]);
        last = b.add(rank, 0, C::forward, "layer", j, t0, s.forward_us, deps);
        if (s.tp > 1) b.add(rank, 2, C::tp_comm, "all_reduce", j, t0 + s.forward_us, s.tp_us, {last});
        mem += 1024;
        info.memory.push_back({(t0 + s.forward_us) * kUs, mem << 20});
        if (stage + 1 < p) {
          fwd_send[rank][j] = b.add(rank, 1, C::pp_comm, "send", j, t0 + s.forward_us, s.send_us, {last});
          b.r.tasks.back().peer_rank = next;
        }
      }
      // Backward sends of stage+1 exist only once that stage is built: build stages downward below.
      (void)last;
    }
  }
  for (int stage = p - 1; stage >= 0; --stage) {
    for (int rank = 0; rank < ranks; ++rank) {
      auto& info = b.r.ranks[rank];
      if (info.pp != stage) continue;
      const int prev = rank - s.tp * s.dp, next = rank + s.tp * s.dp;
      std::int64_t mem = (10 + m) * 1024;
      std::uint32_t last = 0;
      for (int j = 0; j < m; ++j) {
        const std::int64_t t0 = fwd_end + (p - 1 - stage) * (s.backward_us + s.send_us) + j * s.backward_us;
        std::vector<std::uint32_t> deps;
        if (stage + 1 < p) deps.push_back(bwd_send[next][j]);
        last = b.add(rank, 0, C::backward_input, "layer", j, t0, s.backward_us, deps);
        if (s.tp > 1) b.add(rank, 2, C::tp_comm, "all_reduce", j, t0 + s.backward_us, s.tp_us, {last});
        mem -= 1024;
        info.memory.push_back({(t0 + s.backward_us) * kUs, mem << 20});
        if (stage > 0) {
          bwd_send[rank][j] = b.add(rank, 1, C::pp_comm, "send", j, t0 + s.backward_us, s.send_us, {last});
          b.r.tasks.back().peer_rank = prev;
        }
      }
      const std::int64_t end_b = fwd_end + (p - 1 - stage) * (s.backward_us + s.send_us) + m * s.backward_us;
      const auto dp = b.add(rank, 3, C::dp_comm, "all_reduce", -1, end_b, s.dp_us, {last});
      b.add(rank, 0, C::optimizer, "adam", -1, end_b + s.dp_us, s.optimizer_us, {dp});
      info.peak_memory_bytes = std::int64_t{10 + m} << 30;
    }
  }
  b.r.step_time_s = static_cast<double>((bwd_end + s.dp_us + s.optimizer_us) * kUs) * 1e-12;
  return b.r;
}

}  // namespace stepsim::report::testing
