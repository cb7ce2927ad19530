// `ibnetsim sweep` end to end: a small Cartesian sweep, resumed, and the same sweep under mpirun -np 2.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {
using ibn::test::read_json_file;
nlohmann::json read_json(const std::string& path) { return read_json_file(path); }
const std::string kScenario = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/small-allreduce.json";
} // namespace

TEST_CASE("sweep: Cartesian points x seeds, one summary, resumed without rerunning") {
  const auto dir = ibn::test::scratch_dir("sweep-local").string();
  const auto cmd = std::string("sweep ") + kScenario +
                   " --vary 'jobs[0].workload.sizes=256K,1M' --vary routing.adaptive=off,per-packet"
                   " --vary 'jobs[0].workload.iterations=3' --seeds 2 -q -o " + dir;
  const auto r = ibn::test::run_cli(cmd);
  REQUIRE(r.code == 0);
  const auto summary = read_json(dir + "/summary.json");
  CHECK(summary.at("manifest").at("points") == 8);
  CHECK(summary.at("rows").size() == 8); // one row per point and measured collective
  const auto first = std::filesystem::last_write_time(dir + "/points/" +
                                                      summary.at("rows").at(0).at("point").get<std::string>() +
                                                      "/results.json");
  auto loud = cmd;
  loud.replace(loud.find(" -q "), 4, " ");
  const auto again = ibn::test::run_cli(loud);
  REQUIRE(again.code == 0);
  CHECK(again.out.find("reused") != std::string::npos);
  CHECK(std::filesystem::last_write_time(dir + "/points/" + summary.at("rows").at(0).at("point").get<std::string>() +
                                         "/results.json") == first);
  CHECK(ibn::test::run_cli("sweep " + kScenario + " --vary nope=1 -o " + dir).code == 2);
}

TEST_CASE("sweep: under mpirun -np 2 the points are split over the ranks and rank 0 summarises") {
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) {
    MESSAGE("mpirun not installed: skipped");
    return;
  }
  const auto dir = ibn::test::scratch_dir("sweep-mpi").string();
  const auto cmd = std::string("mpirun --allow-run-as-root --oversubscribe -np 2 ") + IBNETSIM_BINARY + " sweep " +
                   kScenario +
                   " --vary 'jobs[0].workload.sizes=256K,1M' --vary 'jobs[0].workload.iterations=3' --seeds 2 -o " +
                   dir + " > " + dir + "/log.txt 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const auto summary = read_json(dir + "/summary.json");
  CHECK(summary.at("manifest").at("mpi_ranks") == 2);
  CHECK(summary.at("rows").size() == 4);
  std::ifstream log(dir + "/log.txt");
  std::stringstream s;
  s << log.rdbuf();
  CHECK(s.str().find("rank 1 of 2") != std::string::npos);
  CHECK(std::filesystem::exists(dir + "/ranks/1.done"));
}
