// Pins sim/comm/nccl_log.cpp on every real nccl-tests log in data/ (copied verbatim from
// ../shared/data/samples) and on broken pastes, whole messages included.
#include <doctest/doctest.h>

#include <vector>

#include "sim/comm/nccl_log.hpp"
#include "sim/config/config_error.hpp"

namespace stepsim::comm {
namespace {

std::string data(const std::string& name) { return std::string(STEPSIM_DATA_DIR) + "/tests/sim/comm/data/" + name; }

std::string error_of(const std::string& text) {
  try {
    parse_nccl_log(text, "log.txt");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("new-format 2-node A100 log with launcher noise") {
  const auto log = read_nccl_log(data("nccl_all_reduce_2node_16xa100-40gb_oci_oke_rdma_8B-8G.txt"));
  CHECK(log.op == Op::all_reduce);
  CHECK(log.ranks == 16);
  CHECK(log.hosts == 2);
  CHECK(log.gpu_name == "NVIDIA A100-SXM4-40GB");
  REQUIRE(log.rows.size() == 31);  // 8 B to 8 GiB by 2
  CHECK(log.rows.front().size_bytes == 8);
  CHECK(log.rows.back().size_bytes == 8589934592);
  CHECK(log.rows.back().time_us == doctest::Approx(67689));
  CHECK(log.rows.back().busbw_gbps == doctest::Approx(237.94));
  CHECK(*log.rows.back().in_place_busbw_gbps == doctest::Approx(237.52));
  CHECK(*log.avg_busbw_gbps == doctest::Approx(66.4834));
}

TEST_CASE("trimmed rank list, no Avg line, new 'Collective test starting' header") {
  const auto log = read_nccl_log(data("nccl_all_reduce_2node_16xa100-40gb_oci_slurm_trimmed_1G-8G.txt"));
  CHECK(log.ranks == 16);  // ranks 0, 7, 8, 15 listed: the highest says 16
  CHECK(log.hosts == 2);
  CHECK(log.rows.size() == 4);
  CHECK(!log.avg_busbw_gbps);
  CHECK(log.rows[0].time_us == doctest::Approx(10887.4));
}

TEST_CASE("old format with [1,N]<stdout>: prefixes and NCCL INFO lines inside the table") {
  const auto log = read_nccl_log(data("nccl_all_reduce_2node_16xa100_p4d_efa_oldformat_interleaved.txt"));
  CHECK(log.op == Op::all_reduce);
  CHECK(log.ranks == 16);
  CHECK(log.hosts == 2);
  REQUIRE(log.rows.size() == 30);  // 8 B to 4 GiB
  CHECK(log.rows.back().time_us == doctest::Approx(183834));
  CHECK(log.rows.back().busbw_gbps == doctest::Approx(43.81));
  CHECK(*log.rows.back().in_place_time_us == doctest::Approx(184216));
}

TEST_CASE("quoted command, single-host 4090 logs") {
  const auto h100 = read_nccl_log(data("nccl_all_reduce_2node_16xh100_gcp_a3mega_8B-8G_quoted_cmd.txt"));
  CHECK(h100.ranks == 16);
  CHECK(h100.rows.size() == 31);
  const auto two = read_nccl_log(data("nccl_all_reduce_2x4090_pcie_8B-2G_docker.txt"));
  CHECK(two.ranks == 2);
  CHECK(two.hosts == 1);
  CHECK(two.rows.size() == 29);
  // No binary name in this paste, and on 2 ranks busbw = algbw for all-reduce as for broadcast:
  // the "sum" redop column says it is a reduction, count = size / 4 (float) that it is all-reduce.
  CHECK(two.op == Op::all_reduce);
  const auto four = read_nccl_log(data("nccl_all_reduce_4x4090_pcie_8B-2G_k8s.txt"));
  CHECK(four.ranks == 4);
  CHECK(four.rows.back().busbw_gbps == doctest::Approx(2.59));
}

const char* kHeader =
    "#  Rank  0 Group  0 Pid  1 on host device  0 [0x1a] GPU\n"
    "#  Rank  1 Group  0 Pid  1 on host device  1 [0x1b] GPU\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";

TEST_CASE("malformed logs are ConfigErrors with file, line and column") {
  CHECK(error_of("hello\n") ==
        "log.txt:1:1: no nccl-tests table: expected a header line such as '#  size  count  type  redop  root  time  algbw  busbw ...' "
        "by the end of the file, found none in its 1 line");
  CHECK(error_of(std::string(kHeader)) == "log.txt:3:1: nccl-tests table has a header but no rows under it");
  CHECK(error_of(std::string(kHeader) + "           8             2     float     sum      -1    8.9x    0.00    0.00      0\n") ==
        "log.txt:4:57: expected a time in us in an nccl-tests row, found '8.9x'");
  CHECK(error_of(std::string(kHeader) + "           8             2     float     sum\n") ==
        "log.txt:4:12: expected an nccl-tests row of 13 columns as the header says, found 4");
}

TEST_CASE("a table pasted without its rank lines parses; its GPU count must come from the caller") {
  const auto log = parse_nccl_log("#       size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n8 2 float sum -1 9.0 0 0 0\n", "log.txt");
  CHECK(log.ranks == 0);
  CHECK(log.rows.size() == 1);
  CHECK_THROWS_WITH_AS(shape_for(log), "log.txt:1:1: no '#  Rank N ... device' lines before this table: cannot tell how many GPUs ran (give --nodes and --gpus)",
                       config::ConfigError);
}

TEST_CASE("a run nccl-tests found wrong is refused at the line that says so") {
  const std::string good = "           8             2     float     sum      -1     9.0    0.00    0.00      0     9.1    0.00    0.00      0\n";
  const std::string wrong = "        1024           256     float     sum      -1    10.0    0.10    0.10     12    10.1    0.10    0.10      0\n";
  CHECK(error_of(std::string(kHeader) + good + wrong) ==
        "log.txt:5:82: this row has 12 wrong elements: the collective gave wrong results, so its timings cannot calibrate a "
        "machine (fix the run until nccl-tests reports no errors)");
  CHECK(error_of(std::string(kHeader) + good + "# Out of bounds values : 108 FAILED\n") ==
        "log.txt:5:1: nccl-tests reports wrong results ('# Out of bounds values : 108 FAILED'): its timings cannot "
        "calibrate a machine (fix the run until it reports OK)");
  // Without a check (-c 0) the column reads N/A, and a passing run says OK.
  const std::string unchecked = "           8             2     float     sum      -1     9.0    0.00    0.00    N/A     9.1    0.00    0.00    N/A\n";
  CHECK(error_of(std::string(kHeader) + unchecked + "# Out of bounds values : 0 OK\n").empty());
}

TEST_CASE("a log indented by a markdown list reads as the same log") {
  const std::string text = std::string(kHeader) +
                           "           8             2     float     sum      -1     9.0    0.00    0.00      0     9.1    0.00    0.00      0\n"
                           "# Avg bus bandwidth    : 0.5\n";
  std::string indented;
  for (std::size_t from = 0, to; (to = text.find('\n', from)) != std::string::npos; from = to + 1)
    indented += "    " + text.substr(from, to + 1 - from);
  const auto plain = parse_nccl_log(text, "x"), four = parse_nccl_log(indented, "x");
  CHECK(four.ranks == plain.ranks);
  CHECK(four.rows.size() == plain.rows.size());
  CHECK(four.rows.front().time_us == plain.rows.front().time_us);
  REQUIRE(four.avg_busbw_gbps);
  CHECK(*four.avg_busbw_gbps == 0.5);
  CHECK(four.gpu_name == plain.gpu_name);
}

TEST_CASE("hostile pastes: 30 KB lines, huge ranks and sizes are refused at their place (shared/reliability)") {
  // These crashed the regex-based reader (stack overflow) or threw stoi / "negative size".
  CHECK(error_of("#  Rank  0 " + std::string(30000, 'a') + "\n") ==
        "log.txt:1:1: no nccl-tests table: expected a header line such as '#  size  count  type  redop  root  time  algbw  busbw ...' "
        "by the end of the file, found none in its 1 line");
  CHECK(error_of("[" + std::string(30000, '1') + ",0]<stdout>: hello\n") ==
        "log.txt:1:1: no nccl-tests table: expected a header line such as '#  size  count  type  redop  root  time  algbw  busbw ...' "
        "by the end of the file, found none in its 1 line");
  const std::string rank = "#  Rank 99999999999 Group  0 Pid 1 on host device  0 [0x07] NVIDIA A100-SXM4-80GB\n";
  CHECK(error_of(rank) == "log.txt:1:9: expected a rank below 65536, found 99999999999");
  CHECK(error_of("#  Rank 65536 Group  0 Pid 1 on host device  0 [0x07] NVIDIA A100-SXM4-80GB\n") ==
        "log.txt:1:9: expected a rank below 65536, found 65536");
  CHECK(error_of(std::string(kHeader) + "  99999999999999999999999  2  float  sum  -1  8.9  0.00  0.00  0\n") ==
        "log.txt:4:3: expected a size in bytes of at most 2^50, found '99999999999999999999999'");
}

TEST_CASE("the op comes from the binary name, else from the table") {
  const std::string row = "     1048576        131072     float    none      -1    100.0   10.49    9.18      0\n";
  CHECK(parse_nccl_log(std::string("# all_gather_perf\n") + kHeader + row, "x").op == Op::all_gather);
  CHECK(parse_nccl_log(std::string(kHeader) + "     1048576        262144     float     sum      -1    100.0   10.49   18.35      0\n", "x").op ==
        Op::all_reduce);
}

TEST_CASE("without a binary name, the redop, root and count columns say which collective it was") {
  // nccl-tests prints redop "none" for collectives without a reduction and root -1 for those
  // without a root; count is elements per rank (size / 4 for a float all-reduce, size / (4·n)
  // for reduce-scatter over n ranks).
  auto op_of = [](const std::string& row) { return parse_nccl_log(std::string(kHeader) + row, "log.txt").op; };
  CHECK(op_of("     1048576        262144     float     sum      -1    100.0   10.49   10.49      0\n") == Op::all_reduce);
  CHECK(op_of("     1048576        131072     float     sum      -1    100.0   10.49    5.24      0\n") == Op::reduce_scatter);
  CHECK(op_of("     1048576        262144     float    none       0    100.0   10.49   10.49      0\n") == Op::broadcast);
  CHECK(op_of("     1048576        131072     float    none      -1    100.0   10.49    5.24      0\n") == Op::all_gather);
  // busbw = algbw and root -1: sendrecv (a broadcast prints its root).
  CHECK(op_of("     1048576        262144     float    none      -1    100.0   10.49   10.49      0\n") == Op::send_recv);
}

TEST_CASE("without a binary name, ops whose columns are alike are named as alternatives, not guessed") {
  // all_gather and alltoall both have busbw = (n-1)/n algbw and print redop none, root -1.
  const auto gather = parse_nccl_log(std::string(kHeader) + "     1048576        131072     float    none      -1    100.0   10.49    5.24      0\n", "log.txt");
  CHECK(gather.op_alternatives == std::vector<Op>{Op::all_to_all});
  // Named by its binary, the same table has no alternative.
  const auto named = parse_nccl_log(std::string("# alltoall_perf -b 8 -e 1G\n") + kHeader +
                                        "     1048576        131072     float    none      -1    100.0   10.49    5.24      0\n", "log.txt");
  CHECK(named.op == Op::all_to_all);
  CHECK(named.op_alternatives.empty());
  // A broadcast with its root column has none either.
  CHECK(parse_nccl_log(std::string(kHeader) + "     1048576        262144     float    none       0    100.0   10.49   10.49      0\n", "log.txt").op_alternatives.empty());
}

}  // namespace
}  // namespace stepsim::comm
