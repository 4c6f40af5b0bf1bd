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

void send_channel(Build& b, const std::vector<Message>& msgs, Slot send, Slot recv) {
  std::size_t last_recv = 0;
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    const Message& m = msgs[i];
    if (i > 0 && m.recv_pass < last_recv) throw std::logic_error("pipeline channel is not FIFO");
    last_recv = m.recv_pass;
    const std::vector<int> group{b.global_of[m.sender], b.global_of[m.receiver]};
    auto members = b.collectives.add(CommClass::pp, comm::Op::send_recv, group, b.in.pp_bytes,
                                     {b.rec.stream(m.sender, send), b.rec.stream(m.receiver, recv)}, -1);
    b.rec.depend(b.passes[m.sender][m.send_pass].end, members[0]);
    // The receive is posted when the data exists, not when the receiver's stream reaches it: an
    // idle posted receive would count as active communication and slow the receiver's compute
    // (engine interference), which a real NCCL recv waiting in its queue barely does.
    b.rec.depend(b.passes[m.sender][m.send_pass].end, members[1]);
    b.rec.depend(members[1], b.passes[m.receiver][m.recv_pass].start);
    const int layer = -1;
    const int transfer = b.rec.record_members({members[0]}, {m.sender}, CommClass::pp, comm::Op::send_recv, b.in.pp_bytes,
                                          layer, m.microbatch, m.chunk, send);
    b.rec.set_last_peer(group[1]);
    b.rec.record_members({members[1]}, {m.receiver}, CommClass::pp, comm::Op::send_recv, b.in.pp_bytes, layer, m.microbatch,
                     m.chunk, recv, transfer);
    b.rec.set_last_peer(group[0]);
  }
}

// The hops of pass_dependencies(), one channel per (sender, direction): forward hops carry
// activations to the next stage, backward hops input gradients to the previous one; each rank of
// the sending stage sends to the rank of the same TP and DP index on the receiving stage.
void all_channels(Build& b) {
  std::vector<std::vector<Message>> forward(b.global_of.size()), backward(b.global_of.size());
  std::vector<std::vector<int>> locals_of_stage(static_cast<std::size_t>(b.in.grid.pp()));
  for (std::size_t local = 0; local < b.global_of.size(); ++local)
    locals_of_stage[static_cast<std::size_t>(b.in.grid.coord(b.global_of[local]).pp)].push_back(static_cast<int>(local));
  for (const PassDependency& dep : pass_dependencies(b.in.schedule)) {
    if (!dep.hop) continue;
    const Pass& pass = b.in.schedule.passes[dep.from.stage][dep.from.index];
    const int chunk = b.in.schedule.passes[dep.to.stage][dep.to.index].chunk;
    const bool ahead = pass.kind == PassKind::forward;
    for (int local : locals_of_stage[static_cast<std::size_t>(dep.from.stage)]) {
      const Coord c = b.in.grid.coord(b.global_of[local]);
      const int to = b.local_of[b.in.grid.rank({c.tp, c.dp, dep.to.stage})];
      (ahead ? forward : backward)[local].push_back({local, to, dep.from.index, dep.to.index, pass.microbatch, chunk});
    }
  }
  for (std::size_t local = 0; local < b.global_of.size(); ++local) {
    send_channel(b, forward[local], Slot::send_next, Slot::recv_prev);
    send_channel(b, backward[local], Slot::send_prev, Slot::recv_next);
  }
}

}  // namespace

void build_pipeline_transfers(Build& b) {
  if (b.in.grid.pp() > 1) all_channels(b);
}

}  // namespace stepsim::plan
