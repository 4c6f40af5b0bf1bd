// The realloc-grown array of the task graph (sim/core/pod_vector.hpp): whatever growth moves, the
// elements read back as written, in order.
#include <doctest/doctest.h>

#include <cstdint>
#include <utility>

#include "sim/core/pod_vector.hpp"

using stepsim::core::PodVector;

namespace {

struct Record {
  std::int64_t a = 0;
  std::uint32_t b = 0;
};

}  // namespace

TEST_CASE("elements survive every growth, from empty past several doublings") {
  PodVector<Record> v;
  CHECK(v.empty());
  constexpr std::uint32_t n = 100'000;  // capacity 16, 32, …, 2^17: 14 reallocations
  for (std::uint32_t i = 0; i < n; ++i) v.push_back({static_cast<std::int64_t>(i) * 3, i});
  REQUIRE(v.size() == n);
  bool all = true;
  for (std::uint32_t i = 0; i < n; ++i) all = all && v[i].a == static_cast<std::int64_t>(i) * 3 && v[i].b == i;
  CHECK(all);
  CHECK(v.back().b == n - 1);
  std::int64_t sum = 0;
  for (const Record& r : v) sum += r.b;
  CHECK(sum == static_cast<std::int64_t>(n) * (n - 1) / 2);
}

TEST_CASE("append, emplace_back and resize put their elements at the end") {
  PodVector<std::uint32_t> v;
  const std::uint32_t xs[] = {7, 8, 9};
  v.append(xs, xs + 3);
  v.emplace_back(10u);
  v.resize(6, 42);
  REQUIRE(v.size() == 6);
  CHECK(v[0] == 7);
  CHECK(v[3] == 10);
  CHECK(v[4] == 42);
  CHECK(v[5] == 42);
  v.resize(2);
  CHECK(v.size() == 2);
  CHECK(v[1] == 8);
  v.append(xs, xs);  // nothing
  CHECK(v.size() == 2);
}

TEST_CASE("a move takes the elements and leaves the source empty; release frees them") {
  PodVector<std::uint32_t> a;
  for (std::uint32_t i = 0; i < 100; ++i) a.push_back(i);
  PodVector<std::uint32_t> b = std::move(a);
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  CHECK(b.size() == 100);
  CHECK(b[99] == 99);
  a = std::move(b);
  CHECK(a.size() == 100);
  a.release();
  CHECK(a.empty());
  a.push_back(5);  // usable again
  CHECK(a[0] == 5);
}

TEST_CASE("an element of the array itself can be pushed, appended or filled in while the array grows") {
  PodVector<std::uint32_t> v;
  for (std::uint32_t i = 0; i < 16; ++i) v.push_back(i + 100);  // full: the next push reallocates
  v.push_back(v[3]);
  CHECK(v.size() == 17);
  CHECK(v[16] == 103);
  v.append(v.begin(), v.begin() + 17);  // doubles past the capacity of 32
  CHECK(v.size() == 34);
  CHECK(v[17] == 100);
  CHECK(v[33] == 103);
  v.resize(80, v[5]);
  CHECK(v[79] == 105);
}
