#include "sim/comm/ops.hpp"

#include <array>
#include <cctype>
#include <cstdint>
#include <utility>

namespace stepsim::comm {
namespace {

constexpr std::array<std::pair<Op, std::string_view>, 6> kOps{{
    {Op::all_reduce, "all_reduce"},
    {Op::all_gather, "all_gather"},
    {Op::reduce_scatter, "reduce_scatter"},
    {Op::all_to_all, "alltoall"},
    {Op::broadcast, "broadcast"},
    {Op::send_recv, "sendrecv"},
}};

constexpr std::array<std::pair<Algorithm, std::string_view>, 6> kAlgorithms{{
    {Algorithm::automatic, "auto"},
    {Algorithm::ring, "ring"},
    {Algorithm::tree, "tree"},
    {Algorithm::nvls, "nvls"},
    {Algorithm::hierarchical, "hierarchical"},
    {Algorithm::direct, "direct"},
}};

constexpr std::array<std::pair<hw::Protocol, std::string_view>, 3> kProtocols{{
    {hw::Protocol::simple, "Simple"},
    {hw::Protocol::ll128, "LL128"},
    {hw::Protocol::ll, "LL"},
}};

template <typename Table, typename Value>
std::string name_of(const Table& table, Value value) {
  for (const auto& [v, name] : table)
    if (v == value) return std::string(name);
  return "?";
}

template <typename Value, typename Table>
std::optional<Value> value_of(const Table& table, std::string_view name) {
  for (const auto& [v, n] : table)
    if (n == name) return v;
  return std::nullopt;
}

template <typename Table>
std::vector<std::string> names_of(const Table& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.second);
  return names;
}

}  // namespace

std::string to_string(Op op) { return name_of(kOps, op); }
std::optional<Op> parse_op(std::string_view name) {
  // nccl-tests binaries say all_to_all / alltoall and sendrecv; accept both spellings.
  if (name == "all_to_all") return Op::all_to_all;
  if (name == "send_recv") return Op::send_recv;
  return value_of<Op>(kOps, name);
}
std::vector<std::string> op_names() { return names_of(kOps); }

std::string to_string(Algorithm algorithm) { return name_of(kAlgorithms, algorithm); }
std::optional<Algorithm> parse_algorithm(std::string_view name) {
  if (name == "automatic") return Algorithm::automatic;
  return value_of<Algorithm>(kAlgorithms, name);
}
std::vector<std::string> algorithm_names() { return names_of(kAlgorithms); }

std::string to_string(hw::Protocol protocol) { return name_of(kProtocols, protocol); }
std::optional<hw::Protocol> parse_protocol(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [p, n] : kProtocols) {
    std::string expected;
    for (char c : n) expected += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == expected) return p;
  }
  return std::nullopt;
}
std::vector<hw::Protocol> all_protocols() {
  std::vector<hw::Protocol> out;
  for (const auto& entry : kProtocols) out.push_back(entry.first);
  return out;
}

double bus_factor(Op op, int ranks) {
  const double n = ranks;
  switch (op) {
    case Op::all_reduce: return 2.0 * (n - 1) / n;
    case Op::all_gather:
    case Op::reduce_scatter:
    case Op::all_to_all: return (n - 1) / n;
    case Op::broadcast:
    case Op::send_recv: return 1.0;
  }
  return 1.0;
}

double algorithm_bandwidth(std::int64_t bytes, double seconds) { return static_cast<double>(bytes) / seconds; }

}  // namespace stepsim::comm
