// What simulating one strategy produces: the headline metrics of one training step, and (when
// asked for) the per-task timeline and per-rank memory timeline that reports draw from.
// Plain data, filled by sim/plan, read by sim/report and tools. Times in seconds at this
// boundary (doubles) except the timeline, which keeps the engine's integer picoseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepsim::plan {

/// What a task was, for reports: "where did the time go" sums by this.
enum class TaskCategory {
  forward,          ///< a layer's forward compute
  backward_input,   ///< input-gradient compute (B in Zero-Bubble terms; all of backward if not split)
  backward_weight,  ///< weight-gradient compute (W), when the schedule splits it
  recompute,        ///< forward recomputation before backward
  optimizer,        ///< optimizer step (memory-bound)
  tp_comm,          ///< tensor-parallel all-reduce / all-gather / reduce-scatter
  pp_comm,          ///< pipeline send/recv
  dp_comm,          ///< data-parallel gradient reduction (and ZeRO-1/2 parameter all-gather)
  zero_comm,        ///< ZeRO-3 parameter all-gather and gradient reduce-scatter
  ep_comm,          ///< expert-parallel token all-to-all (MoE dispatch and combine)
  cp_comm,          ///< context-parallel K/V exchange (ring attention)
  host,             ///< the framework's CPU thread issuing kernels (and the p2p handshake)
  host_copies,      ///< the CPU thread making a list-based collective's per-rank views and copies
  host_transfer,    ///< ZeRO-Offload: gradients copied to host memory, parameters back (PCIe)
  cpu_optimizer,    ///< ZeRO-Offload: the optimizer step on the host CPU
  other,            ///< markers, delays
};
const char* to_string(TaskCategory c);
bool is_communication(TaskCategory c);

struct TaskRecord {
  int rank = 0;
  int stream = 0;             ///< index into RankInfo::streams of its rank
  TaskCategory category = TaskCategory::other;
  std::string op;             ///< "qkv", "attention", "mlp_up", "all_reduce", "send", …
  int layer = -1;             ///< global layer index, -1 if none
  int microbatch = -1;        ///< -1 if none
  int chunk = 0;              ///< virtual pipeline chunk (interleaved schedules)
  std::int64_t start_ps = 0, end_ps = 0;
  std::int64_t sync_wait_ps = 0;   ///< for collective members: time waiting for peers
  double bytes = 0;           ///< communication payload or memory traffic
  double flops = 0;
  std::vector<std::uint32_t> deps;  ///< indices of tasks in StepResult::tasks it waited on
  /// Index of the task before it on its own (rank, stream), -1 for the first: recorded as tasks
  /// are added, in stream order.
  std::int64_t stream_pred = -1;
  int peer_rank = -1;         ///< for sends/recvs: the other end
  int group = -1;             ///< collective members: same id for the members of one collective
};

struct MemorySample {
  std::int64_t t_ps = 0;
  std::int64_t bytes = 0;     ///< in use after this instant
};

/// Resident bytes by kind at the rank's peak.
struct MemoryBreakdown {
  std::int64_t parameters = 0, gradients = 0, optimizer_states = 0;
  std::int64_t activations = 0, gathered_parameters = 0, buffers = 0, reserve = 0;
  std::int64_t fp8_weights = 0;  ///< Transformer Engine's FP8 weight copies and their transposes
  std::int64_t total() const {
    return parameters + fp8_weights + gradients + optimizer_states + activations + gathered_parameters + buffers;
  }
};

struct RankInfo {
  int rank = 0, gpu = 0, server = 0;
  int tp = 0, pp = 0, dp = 0;           ///< coordinates in the parallel grid
  std::vector<std::string> streams;     ///< stream names: "compute", "tp", "dp", "pp"
  std::vector<MemorySample> memory;     ///< memory timeline (empty unless detail was asked for)
  std::int64_t peak_memory_bytes = 0;
  MemoryBreakdown at_peak;
  int layers = 0;                        ///< transformer layers held by this rank's stage
  double busy_s = 0;                     ///< compute-stream busy time
};

/// Load on one link of the hardware graph over the step, for utilization tracks in traces.
struct LinkSample {
  std::int64_t t_ps = 0;
  double bytes_per_s = 0;            ///< total rate carried from this instant on
};
struct LinkLoad {
  std::string name;                  ///< "gpu0->nvswitch0 (NVLink)"
  double capacity_bytes_per_s = 0;   ///< per direction
  std::vector<LinkSample> samples;   ///< in time order (empty unless detail was asked for)
};

struct ExposedComm {
  double tp = 0, pp = 0, dp = 0, zero = 0, ep = 0, cp = 0;  ///< seconds, see sim/plan for the definition
  double total() const { return tp + pp + dp + zero + ep + cp; }
};

struct StepResult {
  std::string name;                  ///< strategy name
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;         ///< model FLOPs (MFU basis) per GPU per second / 1e12
  double mfu = 0;                    ///< model FLOPs / (time · GPUs · peak)
  double hfu = 0;                    ///< executed FLOPs incl. recompute / (time · GPUs · peak)
  /// FP8 training only (else 0): MFU against the FP8 peak, as NVIDIA's benchmark tables state it
  /// (mfu is against the bf16 peak, so FP8 and bf16 runs compare on one scale).
  double mfu_fp8_peak = 0;
  /// FP8 training only: the busiest rank's FP8 cast and amax kernels per step, the weights' casts
  /// included (part of its compute time).
  double fp8_cast_s = 0;
  /// The busiest rank's kernels that add each microbatch's weight gradients into those kept
  /// across the step (Strategy::grad_accumulation), per step; 0 where none run.
  double grad_accumulation_s = 0;
  double bubble_fraction = 0;        ///< pipeline idle share of the step
  ExposedComm exposed_comm_s;
  double sync_stall_s = 0;           ///< time ranks waited in collectives for slower peers
  /// GPU idle while its host thread was still issuing work: the step is CPU-bound there (not
  /// part of bubble_fraction).
  double host_bound_s = 0;
  /// GPU idle while ZeRO-Offload moves gradients and parameters over PCIe or the CPU steps the
  /// optimizer (not part of bubble_fraction).
  double offload_s = 0;
  bool offload_optimizer = false;    ///< context: the plan offloads its optimizer (ZeRO-Offload)
  bool offload_param = false;        ///< context: and its parameters (ZeRO-Infinity)
  /// ZeRO-Offload: host memory its optimizer needs on the fullest server (0 without offload).
  std::int64_t host_memory_bytes = 0;
  std::int64_t host_ram_bytes = 0;   ///< context: a server's host RAM, 0 where the hardware does not state it
  std::int64_t peak_memory_bytes = 0;
  std::int64_t memory_capacity_bytes = 0;
  bool fits = true;
  std::string memory_note;           ///< when it does not fit: by how much and what dominates
  MemoryBreakdown memory_at_peak;
  // Context for reports:
  int gpus = 0, tp = 1, pp = 1, dp = 1, ep = 1, cp = 1, zero_stage = 0, micro_batch = 1, microbatches = 1, v = 1;
  int etp = 1;  ///< expert tensor-parallel degree: tp, or 1 where whole experts fold EP over TP
  std::string schedule, recompute;
  std::vector<int> stage_layers;     ///< transformer layers of each pipeline stage, first to last
  bool sequence_parallel = false;
  std::uint64_t events = 0;          ///< engine events processed
  bool symmetric = false;            ///< simulated representatives only
  // Detail (filled when requested):
  std::vector<TaskRecord> tasks;
  std::vector<RankInfo> ranks;
  std::vector<LinkLoad> links;       ///< links that carried traffic (Engine::TraceSink on_link_load)
};

}  // namespace stepsim::plan
