// What the engine tells an observer as it runs, so reports can be built without the core knowing
// what any task means: the caller keeps what its task ids stand for.
#pragma once

#include "sim/core/ids.hpp"
#include "sim/core/time.hpp"

namespace stepsim::core {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void on_task_start(TaskId /*task*/, TimePoint /*at*/) {}
  virtual void on_task_finish(TaskId /*task*/, TimePoint /*at*/) {}
  /// A transfer's rate changed (bytes/s); 0 while it waits for its latency.
  virtual void on_flow_rate(TaskId /*transfer*/, TimePoint /*at*/, double /*bytes_per_s*/) {}
  /// A link's total carried rate changed (bytes/s), for utilization tracks.
  virtual void on_link_load(LinkId /*link*/, TimePoint /*at*/, double /*bytes_per_s*/) {}
};

}  // namespace stepsim::core
