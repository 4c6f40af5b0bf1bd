// What `sweep` and `advise` share on the terminal: a progress line on stderr while a sweep runs
// (only when stderr is a terminal), and Ctrl-C turned into a stop request the workers see.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>

#include "sim/sweep/sweep_runner.hpp"

namespace stepsim::cli {

/// Redraws "[####....]  412/984  20.6 plans/s  ETA 28 s" at most 10 times a second.
/// update() is called by the runner with its lock held, so it needs none of its own.
class SweepProgress {
 public:
  SweepProgress(bool enabled, int threads);
  void update(const sweep::Progress& p);
  /// Clears the line and prints "984 plans simulated in 41.2 s (23.9 plans/s, 2 threads)".
  void finish(std::size_t simulated);

 private:
  double elapsed_s() const;
  bool enabled_;
  int threads_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

/// While alive, SIGINT sets flag() instead of killing the process; the previous handler returns
/// when it is destroyed. One at a time (a signal handler can reach only a static).
class InterruptFlag {
 public:
  InterruptFlag();
  ~InterruptFlag();
  InterruptFlag(const InterruptFlag&) = delete;
  InterruptFlag& operator=(const InterruptFlag&) = delete;
  const std::atomic<bool>& flag() const;
};

}  // namespace stepsim::cli
