// Opaque ids for what the engine owns. Plain indices wrapped so they cannot be mixed up.
#pragma once

#include <compare>
#include <cstdint>

namespace stepsim::core {

#define STEPSIM_DEFINE_ID(Name)                                   \
  struct Name {                                                   \
    std::uint32_t value = 0;                                      \
    auto operator<=>(const Name&) const = default;                \
  };

STEPSIM_DEFINE_ID(TaskId)    ///< a node of the task DAG
STEPSIM_DEFINE_ID(StreamId)  ///< an in-order queue of tasks, like a CUDA stream
STEPSIM_DEFINE_ID(DeviceId)  ///< an interference domain: streams on one device slow each other
STEPSIM_DEFINE_ID(LinkId)    ///< a directed link of the flow network
STEPSIM_DEFINE_ID(GroupId)   ///< a set of member tasks that must all arrive (a collective)
STEPSIM_DEFINE_ID(RouteId)   ///< a route kept once and taken by any number of transfers

#undef STEPSIM_DEFINE_ID

}  // namespace stepsim::core
