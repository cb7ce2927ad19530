// A what-if study interrupted by SIGINT mid-point resumes from its last checkpointed segment and ends with
// the same documents as an uninterrupted run (wall-clock fields aside); progress goes to stderr, never
// stdout.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {
namespace fs = std::filesystem;
using ibn::test::read_json_file;
using ibn::test::read_text_file;

nlohmann::json strip_wall(nlohmann::json j) {
  if (j.is_object()) {
    j.erase("wall_s");
    j.erase("events_per_s");
    for (auto& [k, v] : j.items()) v = strip_wall(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = strip_wall(v);
  }
  return j;
}

std::size_t checkpoints(const fs::path& dir) {
  std::size_t n = 0;
  if (fs::exists(dir))
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.path().filename().string().rfind("segment-", 0) == 0) ++n;
  return n;
}
} // namespace

TEST_CASE(
    "whatif: SIGINT after the first checkpoint, re-run resumes mid-point, same results as uninterrupted") {
  const auto root = ibn::test::scratch_dir("study-sigint");
  const std::string cmd = std::string(IBNETSIM_BINARY) + " whatif " + IBNETSIM_SOURCE_DIR +
                          "/scenarios/examples/small-allreduce.json --oversubscription 1:1 -j 1"
                          " --set 'jobs[0].workload.iterations=24' --set run.segment_iterations=4"
                          " --set 'jobs[0].workload.jitter.distribution=exponential'"
                          " --set 'jobs[0].workload.jitter.scale_us=3'";
  const auto full = root / "full", cut = root / "cut";
  // Uninterrupted, with progress on stderr.
  REQUIRE(std::system((cmd + " -o " + full.string() + " >" + (root / "full.out").string() + " 2>" +
                       (root / "full.err").string())
                          .c_str()) == 0);
  const auto out = read_text_file((root / "full.out").string()),
             err = read_text_file((root / "full.err").string());
  CHECK(out.find("ETA") == std::string::npos);
  CHECK(out.find("p99.9 us") != std::string::npos);
  INFO(err);
  CHECK(checkpoints(full) == 12); // 2 points x 6 segments
  // Interrupted: SIGINT as soon as the first segment's checkpoint exists.
  const std::string script =
      cmd + " -o " + cut.string() + " >" + (root / "cut.out").string() + " 2>&1 & pid=$!; i=0; " +
      "while [ -z \"$(find " + cut.string() +
      " -name 'segment-*.json' 2>/dev/null | head -n 1)\" ] && [ $i -lt 1200 ]; do sleep 0.05; "
      "i=$((i+1)); done; kill -INT $pid; wait $pid; echo $? >" +
      (root / "cut.rc").string();
  REQUIRE(std::system(("sh -c '" +
                       [&] {
                         std::string q;
                         for (char c : script) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
                         return q;
                       }() +
                       "'")
                          .c_str()) == 0);
  const auto rc = read_text_file((root / "cut.rc").string());
  INFO("exit status after SIGINT: " << rc);
  CHECK(rc != "0\n"); // it was interrupted
  const auto kept = checkpoints(cut);
  CHECK(kept >= 1);
  CHECK(kept < 12);
  CHECK(!fs::exists(cut / "whatif.json"));
  // Re-run: resumes from the checkpoints and ends with the uninterrupted run's documents.
  const auto r = ibn::test::run_cli("whatif " + std::string(IBNETSIM_SOURCE_DIR) +
                                    "/scenarios/examples/small-allreduce.json --oversubscription 1:1 -j 1"
                                    " --set 'jobs[0].workload.iterations=24' --set run.segment_iterations=4"
                                    " --set 'jobs[0].workload.jitter.distribution=exponential'"
                                    " --set 'jobs[0].workload.jitter.scale_us=3' -o " +
                                    cut.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("resumed ") != std::string::npos);
  CHECK(strip_wall(read_json_file((cut / "whatif.json").string())) ==
        strip_wall(read_json_file((full / "whatif.json").string())));
  for (const auto& id : {"1t1-static", "1t1-adaptive"})
    CHECK(strip_wall(read_json_file((cut / "points" / id / "results.json").string())) ==
          strip_wall(read_json_file((full / "points" / id / "results.json").string())));
}
