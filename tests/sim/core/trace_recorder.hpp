// Test helper: a TraceSink that writes everything it sees into one vector, so two runs can be
// compared bit for bit and a test can look up the rates a flow was given.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/core/trace_sink.hpp"

namespace stepsim::core::testing {

struct TraceRecord {
  enum class Kind { start, finish, flow_rate, link_load } kind;
  std::uint32_t id;       ///< task or link
  std::int64_t at_ps;
  std::uint64_t value_bits;  ///< the double's bits, so equality is exact
  bool operator==(const TraceRecord&) const = default;
  double value() const {
    double v;
    std::memcpy(&v, &value_bits, sizeof v);
    return v;
  }
};

class TraceRecorder : public TraceSink {
 public:
  std::vector<TraceRecord> records;

  void on_task_start(TaskId t, TimePoint at) override { add(TraceRecord::Kind::start, t.value, at, 0.0); }
  void on_task_finish(TaskId t, TimePoint at) override { add(TraceRecord::Kind::finish, t.value, at, 0.0); }
  void on_flow_rate(TaskId t, TimePoint at, double r) override { add(TraceRecord::Kind::flow_rate, t.value, at, r); }
  void on_link_load(LinkId l, TimePoint at, double r) override { add(TraceRecord::Kind::link_load, l.value, at, r); }

  /// The rates given to one transfer, in order, as (time ps, bytes/s).
  std::vector<std::pair<std::int64_t, double>> rates_of(TaskId t) const {
    std::vector<std::pair<std::int64_t, double>> out;
    for (const auto& r : records)
      if (r.kind == TraceRecord::Kind::flow_rate && r.id == t.value) out.emplace_back(r.at_ps, r.value());
    return out;
  }

 private:
  void add(TraceRecord::Kind k, std::uint32_t id, TimePoint at, double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    records.push_back({k, id, at.ps, bits});
  }
};

}  // namespace stepsim::core::testing
