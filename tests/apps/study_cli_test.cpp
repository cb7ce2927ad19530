// Studies that use the machine and survive interrupts, through the binary: points in parallel on both
// engines (-j), a point's iterations in checkpointed segments (run.segment_iterations) resumed from the last
// finished segment, and --tail-precision (analysis/segments.hpp, analysis/points.hpp).
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;
using ibn::test::read_json_file;
const std::string kSmall = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/small-allreduce.json";

/// The document without its wall-clock fields (the only ones allowed to differ between two runs).
nlohmann::json without_wall_time(nlohmann::json j) {
  if (j.is_object()) {
    j.erase("wall_s");
    j.erase("events_per_s");
    for (auto& [k, v] : j.items()) v = without_wall_time(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = without_wall_time(v);
  }
  return j;
}

/// Every results.json under dir/points, by point id.
std::vector<std::pair<std::string, nlohmann::json>> point_results(const fs::path& dir) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (const auto& e : fs::directory_iterator(dir / "points"))
    out.emplace_back(e.path().filename().string(),
                     without_wall_time(read_json_file((e.path() / "results.json").string())));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::size_t count_checkpoints(const fs::path& dir) {
  std::size_t n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().rfind("segment-", 0) == 0) ++n;
  return n;
}
} // namespace

TEST_CASE("whatif -j 2 on both engines: the same results as -j 1 (wall-clock fields aside)") {
  for (const std::string engine : {"flow", "packet"}) {
    CAPTURE(engine);
    const auto one = ibn::test::scratch_dir("study-j1-" + engine),
               two = ibn::test::scratch_dir("study-j2-" + engine);
    const std::string args = "whatif " + kSmall + " --engine " + engine +
                             " --oversubscription 1:1,3:1 --set 'jobs[0].workload.iterations=4' -q -o ";
    const auto r1 = ibn::test::run_cli(args + one.string() + " -j 1");
    const auto r2 = ibn::test::run_cli(args + two.string() + " -j 2");
    INFO(r1.out << "\n" << r2.out);
    REQUIRE(r1.code == 0);
    REQUIRE(r2.code == 0);
    CHECK(r2.out.find("2 " + std::string(engine == "flow" ? "child process(es)" : "thread(s)") +
                      " at a time") != std::string::npos);
    CHECK(without_wall_time(read_json_file((one / "whatif.json").string())) ==
          without_wall_time(read_json_file((two / "whatif.json").string())));
    const auto a = point_results(one), b = point_results(two);
    REQUIRE(a.size() == 4);
    CHECK(a == b);
    // And the two studies' points differ from each other (the comparison can fail).
    CHECK(a[0].second != a[2].second);
  }
}

TEST_CASE(
    "run.segment_iterations: segment 0 is the plain run's start, a resumed run equals an uninterrupted one") {
  const auto plain = ibn::test::scratch_dir("seg-plain"), seg = ibn::test::scratch_dir("seg-full"),
             resumed = ibn::test::scratch_dir("seg-resumed");
  const std::string loud =
      "run " + kSmall +
      " --set 'jobs[0].workload.iterations=6' --set 'jobs[0].workload.jitter.distribution=lognormal'"
      " --set 'jobs[0].workload.jitter.scale_us=2'";
  const std::string common = loud + " -q -o ";
  REQUIRE(ibn::test::run_cli(common + plain.string()).code == 0);
  auto r = ibn::test::run_cli(common + seg.string() + " --set run.segment_iterations=4");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto p = read_json_file((plain / "results.json").string());
  const auto s = read_json_file((seg / "results.json").string());
  CHECK(!p.at("manifest").contains("segments")); // default: unchanged output
  CHECK(s.at("manifest").at("segments") == nlohmann::json{{"iterations_per_segment", 4}, {"count", 2}});
  CHECK(count_checkpoints(seg) == 2);
  for (std::size_t c = 0; c < 2; ++c) {
    const auto& ps = p.at("collectives").at(c).at("samples_us");
    const auto& ss = s.at("collectives").at(c).at("samples_us");
    REQUIRE(ss.size() == 6);                                   // 4 + 2
    // Segment 0 uses the scenario's own streams: the first size runs first, so its first 4 samples are the
    // plain run's (the second size starts after 4 + 2 iterations there, after 4 here: other jitter draws).
    if (c == 0)
      for (std::size_t i = 0; i < 4; ++i) CHECK(ss[i] == ps[i]);
    // Segment 1 draws its own jitter: not a copy of the plain run's iterations 4..5 nor of segment 0's.
    CHECK((ss[4] != ps[4] || ss[5] != ps[5]));
    CHECK(s.at("collectives").at(c).at("completion_us").at("n") == 6);
  }
  // Interrupted after segment 0: copy its checkpoint only, re-run; segment 1 runs alone and the result is
  // the same document.
  fs::copy(seg / "checkpoints", resumed / "checkpoints", fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(resumed / "checkpoints"))
    if (e.path().filename() == "segment-000001.json") fs::remove(e.path());
  REQUIRE(count_checkpoints(resumed) == 1);
  r = ibn::test::run_cli(loud + " -o " + resumed.string() + " --set run.segment_iterations=4");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("resumed 1 finished segment(s)") != std::string::npos);
  CHECK(without_wall_time(read_json_file((resumed / "results.json").string())) == without_wall_time(s));
  // Another configuration in the same folder does not reuse those checkpoints (their hash differs).
  r = ibn::test::run_cli(loud + " -o " + resumed.string() + " --set run.segment_iterations=4 --seed 2");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("finished segment(s)") == std::string::npos);
  std::size_t dirs = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(resumed / "checkpoints")) ++dirs;
  CHECK(dirs == 2);
}

TEST_CASE("run --tail-precision: iterations until p99's 95 % interval is within P %, or the cap") {
  // The order-statistic interval of p99 has an upper side only once 0.99^n <= 0.025, i.e. n >= ln 0.025 /
  // ln 0.99 = 367.0 (analysis/tail_stats.hpp): with segments of 50 no target can be reached before 400.
  const auto d = ibn::test::scratch_dir("tail-precision");
  const std::string base =
      "run " + kSmall + " --set 'jobs[0].workload.sizes=256K' --set 'jobs[0].workload.iterations=50' ";
  auto r = ibn::test::run_cli(base + "--tail-precision 5% --max-iters 2000 -o " + (d / "a").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto a = read_json_file((d / "a/results.json").string()).at("manifest").at("tail_precision");
  CHECK(a.at("target_pct") == 5.0);
  CHECK(a.at("reached") == true);
  const auto iters = a.at("iterations").get<std::uint64_t>();
  CHECK(iters >= 400);
  CHECK(iters % 50 == 0);
  CHECK(a.at("half_width_pct").get<double>() <= 5.0);
  CHECK(r.out.find("tail precision: ") != std::string::npos);
  // A cap below 367: the interval stays open, the target is not reached, the last segment is cut at the cap.
  r = ibn::test::run_cli(base + "--tail-precision 5% --max-iters 120 -q -o " + (d / "b").string());
  REQUIRE(r.code == 0);
  const auto b = read_json_file((d / "b/results.json").string());
  CHECK(b.at("manifest").at("tail_precision").at("reached") == false);
  CHECK(b.at("manifest").at("tail_precision").at("iterations") == 120);
  CHECK(b.at("manifest").at("tail_precision").at("half_width_pct").is_null());
  CHECK(b.at("collectives").at(0).at("samples_us").size() == 120);
  // Bad input: exit 2 naming the flag.
  r = ibn::test::run_cli(base + "--tail-precision 0% -o " + (d / "c").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("--tail-precision") != std::string::npos);
  r = ibn::test::run_cli(base + "--tail-precision five -o " + (d / "c").string());
  CHECK(r.code == 2);
}

TEST_CASE("whatif --engine flow in segments: the segments of all points run as parallel children, each point "
          "equals `run` of its configuration, and a lost segment is the only one run again") {
  const auto dir = ibn::test::scratch_dir("study-flow-units");
  const std::string study = "whatif " + kSmall +
                            " --engine flow --oversubscription 1:1,3:1 --routing off,per-packet -j 2"
                            " --set 'jobs[0].workload.iterations=12' --set run.segment_iterations=4"
                            " --set 'jobs[0].workload.jitter.distribution=exponential'"
                            " --set 'jobs[0].workload.jitter.scale_us=3' -o " +
                            dir.string();
  const auto r = ibn::test::run_cli(study);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(count_checkpoints(dir) == 12); // 4 points x 3 segments
  const auto study_points = point_results(dir);
  REQUIRE(study_points.size() == 4);
  // Each point against `run` of its effective configuration: run_point_segmented's segments one after the
  // other in this process (the reference path), not the study's parallel units.
  for (const auto& [id, doc] : study_points) {
    CAPTURE(id);
    const auto cfg = dir / (id + "-config.json");
    {
      std::ofstream f(cfg);
      f << doc.at("manifest").at("config").dump(2);
    }
    const auto out = dir / ("run-" + id);
    const auto rr = ibn::test::run_cli("run " + cfg.string() + " -o " + out.string());
    INFO(rr.out);
    REQUIRE(rr.code == 0);
    auto a = doc, b = without_wall_time(read_json_file((out / "results.json").string()));
    a.at("manifest").erase("source");
    b.at("manifest").erase("source");
    CHECK(a == b);
    // Jitter and routing make the samples differ between iterations (the comparison can fail).
    const auto& c = doc.at("collectives").at(0).at("completion_us");
    CHECK(c.at("min").get<double>() < c.at("max").get<double>());
  }
  // A lost segment (as after SIGINT): only it runs again; the documents are the same as before.
  const auto before = without_wall_time(read_json_file((dir / "whatif.json").string()));
  fs::path lost;
  for (const auto& e : fs::recursive_directory_iterator(dir / "points" / "3t1-adaptive"))
    if (e.path().filename() == "segment-000001.json") lost = e.path();
  REQUIRE(!lost.empty());
  fs::remove(lost);
  fs::remove(dir / "points" / "3t1-adaptive" / "results.json");
  fs::remove(dir / "whatif.json");
  const auto again = ibn::test::run_cli(study);
  INFO(again.out);
  REQUIRE(again.code == 0);
  CHECK(again.out.find("[3t1-adaptive] resumed 2 finished segment(s) of 3") != std::string::npos);
  CHECK(again.out.find("3t1-static (reused from an earlier run)") != std::string::npos);
  CHECK(fs::exists(lost));
  CHECK(without_wall_time(read_json_file((dir / "whatif.json").string())) == before);
  CHECK(point_results(dir) == study_points);
  // A point written by another build of the same release (its manifest's build-id differs) is not reused:
  // that build's models may give other numbers for the same configuration.
  const auto point = dir / "points" / "3t1-static" / "results.json";
  auto doc = read_json_file(point.string());
  REQUIRE(doc.at("manifest").at("build").get<std::string>() != "another-build");
  doc["manifest"]["build"] = "another-build";
  std::ofstream(point) << doc.dump();
  const auto rerun = ibn::test::run_cli(study);
  INFO(rerun.out);
  REQUIRE(rerun.code == 0);
  CHECK(rerun.out.find("3t1-static (reused from an earlier run)") == std::string::npos);
  CHECK(rerun.out.find("3t1-adaptive (reused from an earlier run)") != std::string::npos);
  CHECK(read_json_file(point.string()).at("manifest").at("build") != "another-build");
}
