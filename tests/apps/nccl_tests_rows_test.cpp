// nccl-tests front end: the rows nccl-tests prints for sizes below one aligned part per rank, and its
// per-rank alignment (ALIGN = 4 elements for AllGather and ReduceScatter), as in the real Snellius
// all_gather log of tests/data/nccl-tests (minBytes 8 on 8 ranks: four "0 0" rows, then 128 B).
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

namespace {
std::vector<std::string> table_rows(const std::string& out) {
  std::vector<std::string> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == ' ') rows.push_back(line);
  return rows;
}
} // namespace

TEST_CASE("nccl-tests: sizes below an aligned part per rank print as 0 0 rows and count in the average") {
  const auto r = ibn::test::run_cli(
      "nccl-tests all_gather_perf -q -g 4 --nodes 2 -b 8 -e 512 -f 2 -n 1 -w 0 --engine flow");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto rows = table_rows(r.out);
  REQUIRE(rows.size() == 7); // 8, 16, 32, 64 -> 0 (4 elements x 8 ranks x 4 B = 128 B is the least), 128..512
  for (int k = 0; k < 4; ++k) {
    std::istringstream row(rows[k]);
    std::string size, count;
    row >> size >> count;
    CHECK(size == "0");
    CHECK(count == "0");
  }
  std::istringstream first(rows[4]);
  std::string size, count;
  first >> size >> count;
  CHECK(size == "128");
  CHECK(count == "4");
  // Average bus bandwidth over both columns of all 7 rows (nccl-tests counts the 0 rows too).
  double sum = 0;
  for (std::size_t k = 4; k < rows.size(); ++k) {
    std::istringstream row(rows[k]);
    std::string f[13];
    for (auto& x : f) row >> x;
    sum += std::stod(f[7]) + std::stod(f[11]);
  }
  const auto at = r.out.find("# Avg bus bandwidth    : ");
  REQUIRE(at != std::string::npos);
  const double avg = std::stod(r.out.substr(at + 25));
  CHECK(avg == doctest::Approx(sum / 14.0).epsilon(0.02)); // (the columns are rounded to 0.01)
  CHECK(avg < sum / 6.0);                                  // not the average of the 3 simulated rows
  // all_reduce has no per-rank split: 8 B is a row of its own.
  const auto ar =
      ibn::test::run_cli("nccl-tests all_reduce_perf -q -g 4 --nodes 2 -b 8 -e 8 -n 1 -w 0 --engine flow");
  REQUIRE(ar.code == 0);
  REQUIRE(table_rows(ar.out).size() == 1);
  CHECK(table_rows(ar.out)[0].find("           8             2     float") == 0);
}

TEST_CASE("nccl-tests: a range with no whole aligned part per rank says the least size") {
  const auto r = ibn::test::run_cli("nccl-tests reduce_scatter_perf -q -g 4 --nodes 2 -b 8 -e 64 -n 1 -w 0");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(
      r.out.find("-b/-e: no size from 8 to 64 B holds a whole part per rank (reduce_scatter_perf on 8 ranks "
                 "needs at least 128 B)") != std::string::npos);
}
