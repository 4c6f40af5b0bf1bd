// Internal to sim/core: one run of an Engine's task graph, the event loop of engine.hpp.
//
// Per event: O(log queue) for the heap, plus the task's successors. Successor lists are built once
// at the start of run() as one flat CSR array (edges are collected unsorted while building), and
// every stream's tasks as one more, so the loop touches only flat vectors.
//
// Order within one timestamp: task events and flow completions are merged by (time, seq); the flow
// network's rates are recomputed once, after the last event of that time (engine.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/engine_state.hpp"
#include "sim/core/event_queue.hpp"

namespace stepsim::core {

class Simulation {
 public:
  Simulation(EngineState& state, TraceSink* sink) : s_(state), sink_(sink) {}
  RunStats run();

 private:
  // simulation.cpp: the DAG and streams
  void build_successors();
  void build_stream_orders(std::vector<std::uint32_t>& ready);
  void make_ready(std::uint32_t task);
  void try_start_head(std::uint32_t stream);
  void start(std::uint32_t task);
  void begin_work(std::uint32_t task);
  void finish(std::uint32_t task);
  void release_successors(std::uint32_t task);
  void arrive(std::uint32_t group);
  void schedule(std::uint32_t task, std::int64_t delay_ps, std::uint32_t version = 0);
  bool step();
  bool is_stale(const TaskEvent& event) const;
  void dispatch(const TaskEvent& event);
  void count_event(std::int64_t time_ps);
  void check_all_finished() const;
  // interference.cpp: compute slowed while communication runs on its device
  void start_compute(std::uint32_t task);
  void comm_changed(std::uint32_t device, bool started);
  void rekey_compute(std::uint32_t stream);

  EngineState& s_;
  TraceSink* sink_;
  EventQueue queue_;
  std::uint64_t seq_ = 0;
  std::int64_t now_ps_ = 0;
  RunStats stats_;
  std::vector<std::uint32_t> succ_begin_, succ_;  ///< CSR: edge targets of each task
  std::vector<std::uint32_t> stream_order_;       ///< each stream's tasks, by stream then id
};

}  // namespace stepsim::core
