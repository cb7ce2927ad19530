// Defects a walk through the product as a new user found (2026-12-07), each with the case that showed it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

TEST_CASE("topo generate rail-optimized: a UFM that opens an SU of its own is named in a note") {
  const auto dir = ibn::test::scratch_dir("walk-ufm");
  // 128 nodes fill 4 SUs of 32: the UFM's slot makes a fifth (72 switches instead of 48). Before, silently.
  const auto full =
      ibn::test::run_cli("topo generate rail-optimized --nodes 128 --nics-per-node 8 --su-nodes 32 "
                         "--ufm-ports 4 --rate NDR -o " +
                         (dir / "a.json").string());
  INFO(full.out);
  REQUIRE(full.code == 0);
  CHECK(full.out.find("note: the UFM appliance's ports take the slot of a node") != std::string::npos);
  CHECK(full.out.find("need 5 SUs of 32") != std::string::npos);
  CHECK(full.out.find("--nodes 127") != std::string::npos);
  // The SuperPOD layout (127 nodes + UFM in 4 SUs) gets no note.
  const auto pod =
      ibn::test::run_cli("topo generate rail-optimized --nodes 127 --nics-per-node 8 --su-nodes 32 "
                         "--ufm-ports 4 --rate NDR -o " +
                         (dir / "b.json").string());
  REQUIRE(pod.code == 0);
  CHECK(pod.out.find("note:") == std::string::npos);
}

TEST_CASE("experiment: start_us with fewer (or more) values than senders is refused, naming the key") {
  const auto dir = ibn::test::scratch_dir("walk-experiment");
  const auto def = dir / "three.json";
  {
    std::ofstream f(def);
    f << R"({"name": "three", "senders": 3, "start_us": [0, 100], "bytes_per_sender": "1M"})";
  }
  const auto r = ibn::test::run_cli("experiment " + def.string() + " -o " + (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("start_us: 2 start times for 3 senders") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out" / "summary.json"));
}
