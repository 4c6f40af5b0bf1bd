// Pipeline send/recv between stages: activations forward after each F pass that is not the last
// virtual stage, input gradients backward after each B pass that is not the first. Each transfer
// is a 2-member collective (comm's send_recv): the sender's member waits for its F/B to end, the
// receiver's member is posted on its receive stream in the order its schedule consumes messages,
// and the receiving pass waits for it. The receiver's wait is pipeline bubble (simulate.hpp).
#include <stdexcept>

#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {
namespace {

struct Message {
  int sender = 0, receiver = 0;  // local ranks
  std::size_t send_pass = 0, recv_pass = 0;
  int microbatch = 0, chunk = 0;
};

// Index of (kind, microbatch, chunk) in a stage's pass list.
class PassIndex {
 public:
  PassIndex(const PipelineSchedule& s, int stage) : m_(s.microbatches), v_(s.chunks), index_(2 * m_ * v_, 0) {
    const auto& list = s.passes[stage];
    for (std::size_t i = 0; i < list.size(); ++i)
      if (list[i].kind != PassKind::weight) index_[key(list[i].kind, list[i].microbatch, list[i].chunk)] = i;
  }
  std::size_t of(PassKind k, int mb, int chunk) const { return index_[key(k, mb, chunk)]; }

 private:
  std::size_t key(PassKind k, int mb, int chunk) const {
    return static_cast<std::size_t>(((k == PassKind::forward ? 0 : 1) * m_ + mb) * v_ + chunk);
  }
  int m_, v_;
  std::vector<std::size_t> index_;
};

void send_channel(Build& b, const std::vector<Message>& msgs, Slot send, Slot recv) {
  std::size_t last_recv = 0;
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    const Message& m = msgs[i];
    if (i > 0 && m.recv_pass < last_recv) throw std::logic_error("pipeline channel is not FIFO");
    last_recv = m.recv_pass;
    const std::vector<int> group{b.global_of[m.sender], b.global_of[m.receiver]};
    auto members = b.collectives.add(CommClass::pp, comm::Op::send_recv, group, b.pp_bytes,
                                     {b.stream(m.sender, send), b.stream(m.receiver, recv)}, -1);
    b.depend(b.passes[m.sender][m.send_pass].end, members[0]);
    // The receive is posted when the data exists, not when the receiver's stream reaches it: an
    // idle posted receive would count as active communication and slow the receiver's compute
    // (engine interference), which a real NCCL recv waiting in its queue barely does.
    b.depend(b.passes[m.sender][m.send_pass].end, members[1]);
    b.depend(members[1], b.passes[m.receiver][m.recv_pass].start);
    const int layer = -1;
    b.record_members({members[0]}, {m.sender}, CommClass::pp, comm::Op::send_recv, b.pp_bytes, layer, m.microbatch,
                     m.chunk, send);
    b.meta.back().peer = group[1];
    b.record_members({members[1]}, {m.receiver}, CommClass::pp, comm::Op::send_recv, b.pp_bytes, layer, m.microbatch,
                     m.chunk, recv);
    b.meta.back().peer = group[0];
  }
}

void stage_channels(Build& b, int stage, const std::vector<PassIndex>& index) {
  const int p = b.grid.pp(), last = p * b.schedule.chunks - 1;
  const int next = (stage + 1) % p, prev = (stage + p - 1) % p;
  for (std::size_t local = 0; local < b.global_of.size(); ++local) {
    const Coord c = b.grid.coord(b.global_of[local]);
    if (c.pp != stage) continue;
    std::vector<Message> forward, backward;
    const auto& list = b.schedule.passes[stage];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Pass& pass = list[i];
      const int u = pass.chunk * p + stage;
      if (pass.kind == PassKind::forward && u < last) {
        const int to = b.local_of[b.grid.rank({c.tp, c.dp, next})];
        const int chunk = (u + 1) / p;
        forward.push_back({static_cast<int>(local), to, i, index[next].of(PassKind::forward, pass.microbatch, chunk),
                           pass.microbatch, chunk});
      }
      if (pass.kind == PassKind::backward && u > 0) {
        const int to = b.local_of[b.grid.rank({c.tp, c.dp, prev})];
        const int chunk = (u - 1) / p;
        backward.push_back({static_cast<int>(local), to, i, index[prev].of(PassKind::backward, pass.microbatch, chunk),
                            pass.microbatch, chunk});
      }
    }
    send_channel(b, forward, Slot::send_next, Slot::recv_prev);
    send_channel(b, backward, Slot::send_prev, Slot::recv_next);
  }
}

}  // namespace

void build_pipeline_transfers(Build& b) {
  if (b.grid.pp() == 1) return;
  std::vector<PassIndex> index;
  for (int s = 0; s < b.grid.pp(); ++s) index.emplace_back(b.schedule, s);
  for (int s = 0; s < b.grid.pp(); ++s) stage_channels(b, s, index);
}

}  // namespace stepsim::plan
