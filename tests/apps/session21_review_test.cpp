// Findings of the review of 2026-12-07's fixes (a second reader walked the product after them), each with
// the case that showed it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace {
const std::string kSmall = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/small-allreduce.json";

/// ibnetdiscover text of one Quantum-2 switch (a QM9700, 64 cages) reporting 129 ports, with `hosts` HCAs
/// cabled at `width`x NDR.
void write_one_switch(const std::filesystem::path& p, int hosts, int width) {
  std::ofstream f(p);
  f << "vendid=0x2c9\ndevid=0xd2f2\nswitchguid=0x9c05000000000001(9c05000000000001)\n"
    << "Switch\t129 \"S-9c05000000000001\"\t\t# \"MF0;SW-1:MQM9700/U1\" enhanced port 0 lid 1 lmc 0\n";
  char guid[32];
  for (int i = 1; i <= hosts; ++i) {
    std::snprintf(guid, sizeof guid, "b83f%010x", i);
    f << "[" << i << "]\t\"H-" << guid << "\"[1](" << guid << ") \t\t# \"node" << i << " mlx5_0\" lid "
      << i + 10 << " " << width << "xNDR\n";
  }
  f << "\n";
  for (int i = 1; i <= hosts; ++i) {
    std::snprintf(guid, sizeof guid, "b83f%010x", i);
    f << "vendid=0x2c9\ndevid=0x1021\ncaguid=0x" << guid << "\nCa\t1 \"H-" << guid << "\"\t\t# \"node" << i
      << " mlx5_0\"\n[1](" << guid << ") \t\"S-9c05000000000001\"[" << i << "]\t\t# lid " << i + 10
      << " lmc 0 \"MF0;SW-1:MQM9700/U1\" lid 1 " << width << "xNDR\n\n";
  }
}
} // namespace

TEST_CASE("sweep and whatif: a plain scenario's points raise no 'no effect' warnings") {
  // Each point was rebuilt from the base's effective configuration, where every default is filled in, so
  // every key looked given: "variability.stragglers.delay_us is given but ... count is 0" on every point.
  const auto dir = ibn::test::scratch_dir("s21r-points");
  auto r = ibn::test::run_cli("whatif " + kSmall +
                              " --oversubscription '' --routing off --stragglers none,1x0.5"
                              " --set 'jobs[0].workload.iterations=3' --set 'jobs[0].workload.sizes=64K'"
                              " -o " +
                              (dir / "w").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("no effect") == std::string::npos);
  const auto w =
      ibn::test::read_json_file((dir / "w" / "points" / "3t1-static-s1x0p5" / "results.json").string());
  CHECK(w.at("warnings").dump().find("no effect") == std::string::npos);
  CHECK(r.out.find("static s:1x0.5 none") != std::string::npos); // the routing column holds its entry
  r = ibn::test::run_cli("sweep " + kSmall + " --vary 'jobs[0].workload.sizes=64K,128K' -q -o " +
                         (dir / "s").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("no effect") == std::string::npos);
  // A key the scenario gives that changes nothing is still reported on the points.
  auto doc = ibn::test::read_json_file(kSmall);
  doc["cc"] = {{"algorithm", "none"}, {"params", {{"g", 0.1}}}};
  const auto inert = dir / "inert.json";
  std::ofstream(inert) << doc.dump();
  r = ibn::test::run_cli("sweep " + inert.string() + " --vary 'jobs[0].workload.sizes=64K,128K' -q -o " +
                         (dir / "s2").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("warning: no effect: cc.params is given but cc.algorithm is none") != std::string::npos);
  CHECK(ibn::test::read_json_file(
            (dir / "s2" / "points" / "jobs_0_.workload.sizes=64K-seed=1" / "results.json").string())
            .at("warnings")
            .dump()
            .find("cc.params is given") != std::string::npos);
  // whatif --cc none,dcqcn: inert on the cc-none points only.
  r = ibn::test::run_cli("whatif " + inert.string() +
                         " --oversubscription '' --routing off --cc none,dcqcn"
                         " --set 'jobs[0].workload.iterations=2' --set 'jobs[0].workload.sizes=64K' -o " +
                         (dir / "w2").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("warning: no effect on 1 of 2 points: cc.params is given but cc.algorithm is none") !=
        std::string::npos);
}

TEST_CASE(
    "topo bom: a switch in split mode counts twice the model's ports, a wide one over its ports is refused") {
  // A QM9700 reporting 129 ports (2x NDR200 cables) had its free ports counted as 64 - used (negative past
  // 64 cables, refused outright); a switch of 4x cables over the model's ports must still be refused.
  const auto dir = ibn::test::scratch_dir("s21r-split");
  write_one_switch(dir / "split.txt", 70, 2);
  auto r = ibn::test::run_cli("topo import ibnetdiscover " + (dir / "split.txt").string() + " -o " +
                              (dir / "split.json").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  r = ibn::test::run_cli("topo bom " + (dir / "split.json").string() + " --json > " +
                         (dir / "b.json").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto b = ibn::test::read_json_file((dir / "b.json").string());
  const auto& t = b.at("by_tier").at(0);
  CHECK(t.at("ports") == 128);
  CHECK(t.at("ports_used") == 70);
  CHECK(t.at("ports_free") == 58); // 2 x 64 - 70
  CHECK(t.at("switches_by_model").at("qm9700") == 1);
  CHECK(b.at("warnings").dump().find("1 switch(es) in split mode") != std::string::npos);
  // The real split-mode snippet (tests/data/ibnetdiscover): 5 cabled of 128.
  r = ibn::test::run_cli("topo import ibnetdiscover " + std::string(IBNETSIM_SOURCE_DIR) +
                         "/tests/data/ibnetdiscover/qm9700-ndr200-redacted-snippet-charlie0129.txt -o " +
                         (dir / "real.json").string());
  REQUIRE(r.code == 0);
  r = ibn::test::run_cli("topo bom " + (dir / "real.json").string() + " --json > " +
                         (dir / "r.json").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto real = ibn::test::read_json_file((dir / "r.json").string()).at("by_tier").at(0);
  CHECK(real.at("ports") == 128);
  CHECK(real.at("ports_free") == 128 - real.at("ports_used").get<int>());
  // 4x cables: no split mode, 70 cables on a 64-port model is exit 2.
  write_one_switch(dir / "wide.txt", 70, 4);
  REQUIRE(ibn::test::run_cli("topo import ibnetdiscover " + (dir / "wide.txt").string() + " -o " +
                             (dir / "wide.json").string())
              .code == 0);
  r = ibn::test::run_cli("topo bom " + (dir / "wide.json").string() + " --switch qm9700");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("--switch qm9700: 64 ports, but switch 'MF0;SW-1:MQM9700/U1' has 70 cabled ports") !=
        std::string::npos);
}

TEST_CASE(
    "a folder given where a log, profile, catalog or ibnetdiscover file is expected is named as a folder") {
  // Each said "no perftest result table found", "malformed JSON ... unexpected end of input" or "empty".
  const auto dir = ibn::test::scratch_dir("s21r-folders");
  const std::string d = dir.string();
  struct Case {
    std::string cmd, says;
  };
  REQUIRE(
      ibn::test::run_cli("topo generate fat-tree --tiers 2 --radix 8 --hosts 16 -o " + d + "/ft.json").code ==
      0);
  for (const Case& c : {
           Case{"calibrate fit " + d + " -o " + d + "/p.json", d + ": is a folder, not"},
           Case{"validate nccl-tests " + d, d + ": is a folder, not an nccl-tests log"},
           Case{"validate osu " + d + " --nodes 2 --ppn 1", d + ": is a folder, not an OSU/IMB output file"},
           Case{"calibrate check " + d + " " + d, d + ": is a folder, not"},
           Case{"run " + kSmall + " -q --set calibration=" + d + " -o " + d + "/o",
                d + ": is a folder, not a calibration profile"},
           Case{"topo import ibnetdiscover " + d + " -o " + d + "/f.json",
                d + ": is a folder, not an ibnetdiscover output"},
           Case{"topo bom " + d + "/ft.json --catalog " + d, d + ": is a folder, not a parts catalog"},
       }) {
    const auto r = ibn::test::run_cli(c.cmd);
    INFO(c.cmd);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.says) != std::string::npos);
    CHECK(r.out.find("malformed") == std::string::npos);
  }
}

TEST_CASE("a key repeated in one JSON object: the error gives the line and column of the second copy") {
  const auto dir = ibn::test::scratch_dir("s21r-dupline");
  const auto scen = dir / "dup.json";
  std::ofstream(scen)
      << "{\"seed\": 1,\n \"jobs\": [{\"name\": \"a\"}, {\"name\": \"b\", \"name\": \"c\"}]}\n";
  const auto r = ibn::test::run_cli("run " + scen.string() + " -o " + (dir / "out").string());
  INFO(r.out);
  CHECK(r.code == 2);
  // The second "name" of jobs[1] starts at line 2, column 40.
  CHECK(r.out.find("dup.json:2:40: key $.jobs[1].name appears twice in one object") != std::string::npos);
  CHECK(r.out.find("malformed") == std::string::npos); // it is valid JSON
}

TEST_CASE("calibrate fit: a multi-GPU log that does not say its node count is refused as such") {
  // It was refused as "ran on a single node", which the log never said: the node count was assumed.
  const auto dir = ibn::test::scratch_dir("s21r-nodes");
  std::ifstream in(
      std::string(IBNETSIM_SOURCE_DIR) +
      "/tests/data/nccl-tests/a100-hdr200x4-ib-4node-32gpu-all_reduce-4B-32M-abci-aist-job7194285.log");
  std::ofstream out(dir / "norank.log");
  for (std::string line; std::getline(in, line);) {
    if (line.find("Rank ") != std::string::npos || line.find("NCCL INFO") != std::string::npos) continue;
    if (const auto at = line.find("nGpus 1 "); at != std::string::npos) line.replace(at, 8, "nGpus 8 ");
    out << line << "\n";
  }
  out.close();
  const auto r = ibn::test::run_cli("calibrate fit " + (dir / "norank.log").string() + " -o " +
                                    (dir / "p.json").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(
      r.out.find("norank.log:1: all_reduce_perf does not say how many nodes ran (no '# Rank' lines, no NCCL "
                 "INFO nNodes), so it reads as one node of 8 GPUs") != std::string::npos);
  CHECK(r.out.find("ran on a single node") == std::string::npos);
}

TEST_CASE("validate nccl-tests: a log that does not say its node count gets a note, and --nodes gives it") {
  // It was simulated on one node without a word (a 4-node all_reduce compared with a 1-node simulation).
  const auto dir = ibn::test::scratch_dir("s21r-validate-nodes");
  const std::string src =
      std::string(IBNETSIM_SOURCE_DIR) +
      "/tests/data/nccl-tests/a100-hdr200x4-ib-4node-32gpu-all_reduce-4B-32M-abci-aist-job7194285.log";
  std::ifstream in(src);
  std::ofstream out(dir / "norank.log");
  for (std::string line; std::getline(in, line);) {
    if (line.find("Rank ") != std::string::npos || line.find("NCCL INFO") != std::string::npos) continue;
    if (const auto at = line.find("nGpus 1 "); at != std::string::npos) line.replace(at, 8, "nGpus 8 ");
    out << line << "\n";
  }
  out.close();
  const std::string base =
      "validate nccl-tests " + (dir / "norank.log").string() + " --engine flow -n 1 --max-bytes 64K";
  auto r = ibn::test::run_cli(base);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("norank.log:1: all_reduce_perf does not say how many nodes ran") != std::string::npos);
  CHECK(r.out.find(" 1x8 ") != std::string::npos);
  r = ibn::test::run_cli(base + " --nodes 4");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("does not say how many nodes") == std::string::npos);
  CHECK(r.out.find(" 4x8 ") != std::string::npos);
  // A count that disagrees with the rank lines of a complete log.
  r = ibn::test::run_cli("validate nccl-tests " + src + " --nodes 2");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("--nodes 2: ") != std::string::npos);
  CHECK(r.out.find("all_reduce_perf ran on 4 node(s), as its rank lines say") != std::string::npos);
}
