#include "tools/cli_sweep_progress.hpp"

#include <csignal>
#include <cstdio>

#include "sim/report/format.hpp"
#include "sim/sweep/sweep_table.hpp"

namespace stepsim::cli {
namespace {

// The one mutable static of the CLI: a signal handler may only touch a lock-free atomic.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
using Handler = void (*)(int);
Handler g_previous = SIG_DFL;

extern "C" void on_sigint(int) { g_interrupted.store(true); }

constexpr auto kRedrawEvery = std::chrono::milliseconds(100);

}  // namespace

SweepProgress::SweepProgress(bool enabled, int threads)
    : enabled_(enabled), threads_(threads), start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

double SweepProgress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void SweepProgress::update(const sweep::Progress& p) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < kRedrawEvery && p.done != p.total) return;
  last_draw_ = now;
  std::fprintf(stderr, "\r%s\033[K", sweep::format_progress(p.done, p.total, elapsed_s()).c_str());
  std::fflush(stderr);
}

void SweepProgress::finish(std::size_t simulated) {
  if (!enabled_) return;
  const double t = elapsed_s();
  std::fprintf(stderr, "\r\033[K%zu plans simulated in %s (%s plans/s, %d thread%s)\n", simulated,
               report::duration(t).c_str(), report::fixed(t > 0 ? static_cast<double>(simulated) / t : 0, 1).c_str(),
               threads_, threads_ == 1 ? "" : "s");
}

InterruptFlag::InterruptFlag() {
  g_interrupted = false;
  g_previous = std::signal(SIGINT, on_sigint);
}

InterruptFlag::~InterruptFlag() { std::signal(SIGINT, g_previous == SIG_ERR ? SIG_DFL : g_previous); }

const std::atomic<bool>& InterruptFlag::flag() const { return g_interrupted; }

}  // namespace stepsim::cli
