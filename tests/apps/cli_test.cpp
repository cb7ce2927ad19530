// End-to-end tests of the `ibnetsim` binary: exit codes (0 ok, 2 bad input) and messages naming the
// file, flag or key, as docs/CLI.md promises.
#include "tests/apps/run_cli.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using ibn::test::run_cli;
using ibn::test::scratch_dir;

TEST_CASE("topo generate + info: JSON has the keys of CLI.md and the requested ratio") {
  const auto dir = scratch_dir("cli_generate");
  const std::string fab = (dir / "f.json").string();
  auto r = run_cli("topo generate fat-tree --tiers 2 --radix 16 --hosts 96 --oversubscription 3:1 --rate HDR -o " + fab);
  REQUIRE(r.code == 0);
  r = run_cli("topo info " + fab + " --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"hosts", "switches", "links", "tiers", "per_tier", "bisection_gbps", "diameter_hops"})
    CHECK(j.contains(key));
  CHECK(j["hosts"] == 96);
  CHECK(j["tiers"] == 2);
  CHECK(j["per_tier"][0]["oversubscription"].get<double>() == doctest::Approx(3.0));
  CHECK(j["bisection_gbps"].get<double>() == doctest::Approx(96 * 200.0 / 6));
  r = run_cli("topo info " + fab);
  CHECK(r.code == 0);
  CHECK(r.out.find("bisection") != std::string::npos);
}

TEST_CASE("topo export: dot, json and ibnetdiscover, ibnetdiscover re-imports to the same counts") {
  const auto dir = scratch_dir("cli_export");
  const std::string fab = (dir / "f.json").string();
  REQUIRE(run_cli("topo generate dragonfly --p 2 --g 5 -o " + fab).code == 0);
  REQUIRE(run_cli("topo export " + fab + " --format dot -o " + (dir / "f.dot").string()).code == 0);
  std::ifstream dot(dir / "f.dot");
  std::string first;
  std::getline(dot, first);
  CHECK(first.rfind("graph", 0) == 0);
  REQUIRE(run_cli("topo export " + fab + " --format ibnetdiscover -o " + (dir / "f.txt").string()).code == 0);
  const auto a = nlohmann::json::parse(run_cli("topo info " + fab + " --json").out);
  const auto b = nlohmann::json::parse(run_cli("topo info " + (dir / "f.txt").string() + " --json").out);
  CHECK(a["hosts"] == b["hosts"]);
  CHECK(a["switches"] == b["switches"]);
  CHECK(a["links"] == b["links"]);
  CHECK(a["bisection_gbps"] == b["bisection_gbps"]);
}

TEST_CASE("topo import ibnetdiscover on a real fabric") {
  const std::string in = std::string(IBNETSIM_TEST_DATA) + "/ibnetdiscover/sx6036-qdr-fdr10-2014-ibnetdiscover.txt";
  const auto dir = scratch_dir("cli_import");
  const auto r = run_cli("topo import ibnetdiscover " + in + " -o " + (dir / "f.json").string());
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(run_cli("topo info " + (dir / "f.json").string() + " --json").out);
  CHECK(j["switches"] == 8);
  CHECK(j["hosts"] == 144);
  CHECK(j["hcas"] == 145); // tank1's dual-port card has both ports cabled: two HCA nodes of one host
}

TEST_CASE("bad input exits 2 with a message naming the flag, file or key") {
  const auto dir = scratch_dir("cli_bad");
  auto r = run_cli("topo generate fat-tree --radix 64 --oversubscription 4:1 -o " + (dir / "x.json").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("51.2 down-ports per leaf") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "x.json")); // nothing half-written

  r = run_cli("topo generate fat-tree --hosts -5");
  CHECK(r.code == 2);
  CHECK(r.out.find("--hosts") != std::string::npos);

  r = run_cli("topo generate fat-tree --rate ZDR");
  CHECK(r.code == 2);
  CHECK(r.out.find("--rate") != std::string::npos);

  r = run_cli("topo generate dragonfly --a 4 --h 2 --p 2 --g 12");
  CHECK(r.code == 2);
  CHECK(r.out.find("a*h+1") != std::string::npos);

  r = run_cli("topo info " + (dir / "missing.json").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("missing.json") != std::string::npos);

  {
    std::ofstream bad(dir / "bad.json");
    bad << "{\n  \"schema\": \"ibnetsim.fabric\",\n  \"nodes\": [,]\n}\n";
  }
  r = run_cli("topo info " + (dir / "bad.json").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("bad.json:3") != std::string::npos); // the line of the syntax error

  r = run_cli("topo generate fat-tree --colour red");
  CHECK(r.code == 2);
  CHECK(r.out.find("--colour") != std::string::npos);

  r = run_cli("topo export " + (dir / "missing.json").string() + " --format svg");
  CHECK(r.code == 2);
}

TEST_CASE("list prints the registries and --help works on every topo command") {
  auto r = run_cli("list");
  CHECK(r.code == 0);
  CHECK(r.out.find("fat-tree") != std::string::npos);
  CHECK(r.out.find("dragonfly") != std::string::npos);
  for (const char* cmd : {"topo generate fat-tree --help", "topo generate dragonfly --help", "topo info --help",
                          "topo import ibnetdiscover --help", "topo export --help"}) {
    CAPTURE(cmd);
    r = run_cli(cmd);
    CHECK(r.code == 0);
    CHECK(r.out.find("Example:") != std::string::npos);
  }
}
