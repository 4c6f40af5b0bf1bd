// Internal to sim/core: the two priority queues of the event loop.
//
// EventQueue holds task events (a finish, the end of a transfer's latency) as a binary min-heap on
// (time, seq). seq is the engine's insertion counter, unique per event, so the order is total and
// ties at one time resolve in insertion order: same input, same timeline (ns-3's (ts, uid) key).
// Stale events (a compute finish re-keyed by interference) are left in place and skipped by the
// caller through a version number (lazy deletion).
//
// FlowHeap holds the completion key of every flow that is moving bytes. Flow rates change at
// almost every rate recomputation, so instead of lazy deletion (which would pile up one stale entry
// per change) it is an indexed heap: each flow knows its slot and is moved in place.
// push/pop/update: O(log n). No allocation once the vectors have grown.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace stepsim::core {

/// The (time, seq) key shared by both queues.
struct EventKey {
  std::int64_t time_ps = 0;
  std::uint64_t seq = 0;
  auto operator<=>(const EventKey&) const = default;
};

/// a < b, as one comparison of (time, seq) read as a 128-bit number (the time's sign bit flipped so
/// that it orders as unsigned): the heaps' sifts compare at every level, and two 64-bit comparisons
/// cost a hard-to-predict branch each time.
inline bool earlier(const EventKey& a, const EventKey& b) {
  using Wide = unsigned __int128;
  const auto wide = [](const EventKey& k) {
    return (static_cast<Wide>(static_cast<std::uint64_t>(k.time_ps) ^ (std::uint64_t{1} << 63)) << 64) | k.seq;
  };
  return wide(a) < wide(b);
}

struct TaskEvent {
  EventKey key;
  std::uint32_t task = 0;
  std::uint32_t version = 0;  ///< compared with the stream's version for compute finishes
};

class EventQueue {
 public:
  bool empty() const { return heap_.empty() && head_ == now_.size(); }
  std::size_t size() const { return heap_.size() + (now_.size() - head_); }
  const TaskEvent& top() const { return now_first() ? now_[head_] : heap_.front(); }
  void push(const TaskEvent& e) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  /// An event at the current time, keyed after every event queued so far at that time (a zero
  /// delay: the loop's time never goes back, and seq only grows). Such events come out in the
  /// order they went in, so they wait in a FIFO beside the heap, O(1) each; top() and pop() take
  /// the smaller key of the two fronts, so the order is the heap's alone would be.
  void push_now(const TaskEvent& e) {
    if (head_ == now_.size()) {
      now_.clear();
      head_ = 0;
    }
    now_.push_back(e);
  }
  TaskEvent pop() {
    if (now_first()) return now_[head_++];
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const TaskEvent e = heap_.back();
    heap_.pop_back();
    return e;
  }

 private:
  bool now_first() const { return head_ < now_.size() && (heap_.empty() || earlier(now_[head_].key, heap_.front().key)); }

  // A function object, not a function pointer, so the heap algorithms inline the comparison.
  struct Later {
    bool operator()(const TaskEvent& a, const TaskEvent& b) const { return earlier(b.key, a.key); }
  };
  std::vector<TaskEvent> heap_;
  std::vector<TaskEvent> now_;  // zero-delay events, now_[head_, end) still queued
  std::size_t head_ = 0;
};

/// Min-heap of ids in [0, capacity) keyed by EventKey, with in-place key updates.
class FlowHeap {
 public:
  bool empty() const { return heap_.empty(); }
  bool contains(std::uint32_t id) const { return id < slot_.size() && slot_[id] != kAbsent; }
  std::uint32_t top() const { return heap_.front(); }
  const EventKey& key(std::uint32_t id) const { return key_[id]; }

  /// Inserts `id` or moves it to its new key.
  void set(std::uint32_t id, EventKey k) {
    if (id >= slot_.size()) {
      slot_.resize(id + 1, kAbsent);
      key_.resize(id + 1);
    }
    const EventKey old = key_[id];
    key_[id] = k;
    if (slot_[id] == kAbsent) {
      slot_[id] = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back(id);
      sift_up(slot_[id]);
    } else if (earlier(k, old)) {
      sift_up(slot_[id]);
    } else {
      sift_down(slot_[id]);
    }
  }

  void erase(std::uint32_t id) {
    const std::uint32_t i = slot_[id];
    const std::uint32_t last = heap_.back();
    heap_.pop_back();
    slot_[id] = kAbsent;
    if (last == id) return;
    heap_[i] = last;
    slot_[last] = i;
    sift_up(i);
    sift_down(slot_[last]);
  }

 private:
  static constexpr std::uint32_t kAbsent = 0xffffffffu;

  void place(std::uint32_t i, std::uint32_t id) {
    heap_[i] = id;
    slot_[id] = i;
  }
  void sift_up(std::uint32_t i) {
    const std::uint32_t id = heap_[i];
    while (i > 0) {
      const std::uint32_t parent = (i - 1) / 2;
      if (!earlier(key_[id], key_[heap_[parent]])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, id);
  }
  void sift_down(std::uint32_t i) {
    const std::uint32_t id = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
      std::size_t child = 2 * static_cast<std::size_t>(i) + 1;
      if (child >= n) break;
      if (child + 1 < n && earlier(key_[heap_[child + 1]], key_[heap_[child]])) ++child;
      if (!earlier(key_[heap_[child]], key_[id])) break;
      place(i, heap_[child]);
      i = static_cast<std::uint32_t>(child);
    }
    place(i, id);
  }

  std::vector<std::uint32_t> heap_;  ///< ids in heap order
  std::vector<std::uint32_t> slot_;  ///< id -> index in heap_, kAbsent if not queued
  std::vector<EventKey> key_;        ///< id -> its key
};

}  // namespace stepsim::core
