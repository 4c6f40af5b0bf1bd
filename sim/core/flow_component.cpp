// Which flows a change can affect, and the max-min problem over them (flow_network.hpp).
//
// Why solving only the component is exact. The component C is closed under "shares a coupled link":
// every changed link is coupled, and so is every saturated link a C flow crosses. Other links C
// crosses (boundary links) had spare capacity; C is solved with what their outside flows leave.
// If the solution fills no boundary residual, the union of C's new rates and everyone else's old
// rates is the max-min allocation: it is feasible; every C flow's bottleneck is full and is a
// coupled link (a boundary one would be filled), whose flows are all in C, so it is a bottleneck
// globally; every outside flow keeps its old bottleneck, a saturated link that no C flow crosses
// (else that link would be coupled and the outside flow in C) and that did not change. If the
// solution does fill a residual, that link is coupled and C solved again; C only grows, so this
// ends. (The max-min allocation is unique and characterized by bottlenecks: Bertsekas & Gallager,
// "Data Networks", 2nd ed., section 6.5.)
//
// A filled residual needs coupling only if an outside flow on it has a higher rate than the C flows
// there. If not, the C flows that froze at it have the highest rate on a full link, so it is their
// bottleneck; the outside flows on it were not bottlenecked there (it had spare capacity) and keep
// their bottlenecks, which C does not cross. (Equal within 1e-9 counts as not higher.)
//
// Levels. Progressive filling freezes flows in rising order of rate. Removing flow f changes no
// freeze below f's old rate: a link that filled below it did not carry f (f would have frozen
// there), and f's links now fill no sooner. Adding flow g changes none below min over g's links of
// capacity / hops on it, since no link of g can fill before every flow on it reaches that rate. So
// with `level` the least of these over all changes at one timestamp, every flow with an old rate
// below level keeps it. The others are the max-min allocation of the network minus those fixed
// flows (same bottlenecks, less the fixed flows' rates), which is what C is solved in: fixed flows
// are never drawn in, and their rates come off every link's capacity.
#include "sim/core/flow_network.hpp"

#include <algorithm>

namespace stepsim::core {

namespace {
// A link this close to full counts as full: erring this way only makes the component larger.
constexpr double kFullFraction = 1.0 - 1e-9;
// An outside rate must exceed the C rates by more than this to count as higher (ties are fine).
constexpr double kAboveFraction = 1.0 + 1e-9;
}  // namespace

bool FlowNetwork::is_saturated(std::uint32_t link) const {
  return links_[link].load >= links_[link].capacity * kFullFraction;
}

void FlowNetwork::include_link(std::uint32_t link) {
  if (links_[link].mark == epoch_) return;
  links_[link].mark = epoch_;
  comp_links_.push_back(link);
}

void FlowNetwork::couple_link(std::uint32_t link) {
  if (links_[link].coupled == epoch_) return;
  links_[link].coupled = epoch_;
  include_link(link);
  to_drain_.push_back(link);
}

// True for a flow outside the component whose rate the pending changes cannot move (levels above).
bool FlowNetwork::is_fixed(const Flow& f) const { return f.mark != epoch_ && f.rate < level_ * kFullFraction; }

void FlowNetwork::add_to_component(std::uint32_t flow) {
  Flow& f = flows_[flow];
  f.mark = epoch_;
  comp_flows_.push_back(flow);
  for (const std::uint32_t l : f.route) {
    include_link(l);
    if (is_saturated(l)) couple_link(l);
  }
}

// Brings every unfixed flow of every coupled link into the component, and follows their routes.
void FlowNetwork::drain_coupled() {
  while (!to_drain_.empty()) {
    const std::uint32_t link = to_drain_.back();
    to_drain_.pop_back();
    for (const std::uint32_t fl : links_[link].flows)
      if (flows_[fl].mark != epoch_ && !is_fixed(flows_[fl])) add_to_component(fl);
  }
}

// New flows are in C. A changed link couples only if it was saturated (by the loads before the
// change): one with spare capacity was nobody's bottleneck, and losing a flow leaves it so; it is
// included anyway so that its load is brought up to date.
void FlowNetwork::seed_component() {
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  for (const std::uint32_t fl : new_flows_) add_to_component(fl);
  new_flows_.clear();
  for (const std::uint32_t l : dirty_links_) {
    links_[l].dirty = false;
    include_link(l);
    if (is_saturated(l)) couple_link(l);
  }
  dirty_links_.clear();
  drain_coupled();
}

void FlowNetwork::build_problem() {
  problem_.clear();
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    Link& link = links_[comp_links_[i]];
    link.local = static_cast<std::uint32_t>(i);
    double capacity = link.capacity;  // less what outside flows use: residual, or fixed flows
    solve_work_ += 1 + link.flows.size();
    for (const std::uint32_t fl : link.flows)
      if (flows_[fl].mark != epoch_) capacity -= flows_[fl].rate;
    problem_.capacity.push_back(capacity);
  }
  for (std::size_t i = 0; i < comp_flows_.size(); ++i) {
    Flow& f = flows_[comp_flows_[i]];
    f.local = static_cast<std::uint32_t>(i);
    solve_work_ += f.route.size();
    for (const std::uint32_t l : f.route) problem_.route_links.push_back(links_[l].local);
    problem_.end_flow();
  }
}

// Couples every boundary link whose residual the last solve filled while an unfixed outside flow
// on it has a higher rate than any C flow there; true if there was one.
bool FlowNetwork::couple_filled_residuals() {
  const std::size_t links = comp_links_.size();
  for (std::size_t i = 0; i < links; ++i) {
    const std::uint32_t l = comp_links_[i];
    if (links_[l].coupled == epoch_) continue;
    double load = 0, c_max = 0, outside_max = 0;
    for (const std::uint32_t fl : links_[l].flows) {
      const Flow& f = flows_[fl];
      if (f.mark == epoch_) {
        load += rates_[f.local];
        c_max = std::max(c_max, rates_[f.local]);
      } else if (!is_fixed(f)) {
        outside_max = std::max(outside_max, f.rate);
      }
    }
    if (load >= problem_.capacity[i] * kFullFraction && outside_max > c_max * kAboveFraction) couple_link(l);
  }
  if (to_drain_.empty()) return false;
  drain_coupled();
  return true;
}

}  // namespace stepsim::core
