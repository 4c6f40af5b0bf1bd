// The flow network: directed links with a capacity (bytes/s) and the flows moving bytes over them.
//
// Model (../shared/DESIGN.md, "Flow network"): every flow that is moving bytes gets the rate that
// max-min fairness gives it over its route (max_min.hpp). Rates change only when a flow starts or
// ends, and then only for the flows connected to it through shared links (the connected component
// of the flow/link graph); all changes at one timestamp are solved together, once, by recompute().
// Only *saturated* links couple flows: a link with spare capacity passes no change from one of its
// flows to another unless the change fills it. So the component grows from the changed links
// through saturated ones; a link with spare capacity on its edge enters the solve with the
// capacity its outside flows leave (a residual), and if the new rates fill that residual past an
// outside flow's rate the link is coupled too and the component solved again. Flows whose rate
// is below the level of every change keep it and stay out (flow_component.cpp argues both).
// A flow's remaining bytes are a double: remaining(t) = remaining(updated) - rate·(t - updated).
// Its completion time is rounded up to a whole picosecond (rounding.hpp) and kept in an indexed
// heap; a rate change moves the key in place. A flow whose remainder drops under kDoneBytes is done
// (float drift must not leave a flow crawling through picosecond-long steps).
//
// The network knows flows by slot numbers and the task that owns each (an opaque TaskId for the
// trace); it knows nothing of what the bytes mean. Latency is the engine's business: a flow is
// started here only once its latency has passed.
//
// Complexity: start/finish O(route length) (a flow remembers its slot in each link's flow list);
// recompute O((F + L + H) log) over the F flows, L links and H hops of the affected components.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/ids.hpp"
#include "sim/core/max_min.hpp"
#include "sim/core/time.hpp"
#include "sim/core/trace_sink.hpp"

namespace stepsim::core {

class FlowNetwork {
 public:
  /// A flow with less than this many bytes left is finished.
  static constexpr double kDoneBytes = 1e-6;
  static constexpr double kNoLevel = 1e300;

  /// Throws std::invalid_argument unless capacity is finite and > 0.
  LinkId add_link(double capacity_bytes_per_s);
  /// Multiplies a link's capacity by factor (> 0, finite); only before flows run.
  void scale_link(LinkId link, double factor);
  std::size_t link_count() const { return links_.size(); }
  bool has_link(LinkId link) const { return link.value < links_.size(); }

  /// A flow of `bytes` (> 0) owned by `task` enters the network at now_ps. It moves nothing until
  /// the next recompute() gives it a rate. Returns its slot.
  std::uint32_t start_flow(std::span<const LinkId> route, double bytes, TaskId task, std::int64_t now_ps);
  /// Removes a finished flow; its bytes count as carried by every link of its route.
  void finish_flow(std::uint32_t flow, std::int64_t now_ps);

  /// True when flows started or finished since the last recompute().
  bool has_changes() const { return !dirty_links_.empty(); }
  /// Solves max-min rates for the components touched since the last call and re-keys the
  /// completions of flows whose rate changed, numbering new keys from ++seq.
  void recompute(std::int64_t now_ps, std::uint64_t& seq, TraceSink* sink);
  std::uint64_t rate_updates() const { return rate_updates_; }
  /// Work the re-solves have done so far: per max-min problem built, its links with every flow on
  /// them (inside or outside the problem) and its flows' route hops (a caller with a cost budget
  /// reads it; the engine does not).
  std::uint64_t solve_work() const { return solve_work_; }

  bool has_completion() const { return !completions_.empty(); }
  /// Requires: has_completion().
  std::uint32_t next_flow() const { return completions_.top(); }
  const EventKey& next_key() const { return completions_.key(completions_.top()); }
  TaskId task_of(std::uint32_t flow) const { return flows_[flow].task; }

  Duration link_busy(LinkId link) const { return {links_[link.value].busy_ps}; }
  double link_bytes(LinkId link) const { return links_[link.value].bytes; }

 private:
  struct Link {
    double capacity = 0;                ///< bytes/s
    std::vector<std::uint32_t> flows;   ///< active flows crossing it (once per hop)
    std::vector<std::uint32_t> hop;     ///< per entry of flows: which hop of that flow's route it is
    std::int64_t busy_ps = 0;           ///< time with at least one flow, closed intervals
    std::int64_t busy_since_ps = 0;     ///< start of the open interval while flows is non-empty
    double bytes = 0;                   ///< bytes of finished flows that crossed it
    double load = 0;                    ///< sum of its flows' rates after the last solve
    std::uint64_t mark = 0;             ///< epoch in which it was put in the component's link list
    std::uint64_t coupled = 0;          ///< epoch in which all its flows were put in the component
    std::uint32_t local = 0;            ///< index in the current MaxMinProblem
    bool dirty = false;
  };
  struct Flow {
    std::vector<std::uint32_t> route;   ///< link indices
    std::vector<std::uint32_t> slot;    ///< position in links_[route[k]].flows
    double bytes = 0;
    double remaining = 0;               ///< bytes left at updated_ps
    double rate = 0;                    ///< bytes/s since updated_ps
    std::int64_t updated_ps = 0;
    TaskId task;
    std::uint64_t mark = 0;             ///< epoch in which it joined the component
    std::uint32_t local = 0;            ///< index in the current MaxMinProblem
  };

  void mark_dirty(std::uint32_t link);
  void apply_rate(std::uint32_t flow, double rate, std::int64_t now_ps, std::uint64_t& seq, TraceSink* sink);
  void update_loads(std::int64_t now_ps, TraceSink* sink);
  // flow_component.cpp
  void seed_component();
  void add_to_component(std::uint32_t flow);
  bool is_fixed(const Flow& f) const;
  void include_link(std::uint32_t link);
  void couple_link(std::uint32_t link);
  void drain_coupled();
  bool is_saturated(std::uint32_t link) const;
  void build_problem();
  bool couple_filled_residuals();
  void unlink_hop(std::uint32_t flow, std::size_t hop);

  std::vector<Link> links_;
  std::vector<Flow> flows_;                 ///< slots; finished ones are reused via free_
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> dirty_links_;
  std::vector<std::uint32_t> new_flows_;    ///< started since the last recompute()
  /// Flows whose rate is below this level keep it through the next recompute() (flow_component.cpp).
  double level_ = kNoLevel;
  FlowHeap completions_;
  std::uint64_t epoch_ = 0;
  std::uint64_t rate_updates_ = 0;
  std::uint64_t solve_work_ = 0;
  // Scratch for recompute(), kept to avoid allocating once per timestamp.
  std::vector<std::uint32_t> comp_links_, comp_flows_, to_drain_;
  MaxMinProblem problem_;
  MaxMinSolver solver_;
  std::vector<double> rates_;
};

}  // namespace stepsim::core
