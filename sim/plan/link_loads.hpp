// The load on each link of the hardware graph over the step, for the trace's utilization tracks:
// what the engine reports (core::TraceSink::on_link_load) while it runs, kept per link, then
// named after the cluster's link. Recorded only when detail is asked for.
#pragma once

#include <cstdint>
#include <vector>

#include "hardware/cluster.hpp"
#include "sim/core/trace_sink.hpp"
#include "sim/plan/scenario.hpp"
#include "sim/plan/step_result.hpp"

namespace stepsim::comm {
class Network;
}

namespace stepsim::plan {

class LinkLoadRecorder : public core::TraceSink {
 public:
  void on_link_load(core::LinkId link, core::TimePoint at, double bytes_per_s) override;

  /// One LinkLoad per cluster link that carried traffic, in cluster order, with its name and its
  /// capacity as the engine had it (`faults` scale it).
  std::vector<LinkLoad> loads(const hw::Cluster& cluster, const comm::Network& network,
                              const std::vector<LinkFault>& faults) const;

 private:
  std::vector<std::vector<LinkSample>> samples_;  ///< by engine link id
};

}  // namespace stepsim::plan
