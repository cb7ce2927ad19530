// A what-if study interrupted by SIGINT mid-point resumes from its last checkpointed segment and ends with
// the same documents as an uninterrupted run (wall-clock fields aside); progress goes to stderr, never
// stdout.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

extern char** environ;

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
                          " --set 'jobs[0].workload.iterations=96' --set run.segment_iterations=8"
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
  CHECK(checkpoints(full) ==
        24); // 2 points x 12 segments (long enough that the interrupt lands mid-run on a loaded machine)
  // Interrupted: SIGINT as soon as the first segment's checkpoint exists (spawned directly: a shell's
  // background job would have SIGINT ignored).
  const std::string line = cmd + " -o " + cut.string() + " >" + (root / "cut.out").string() + " 2>&1";
  pid_t pid = 0;
  const char* argv[] = {"/bin/sh", "-c", line.c_str(), nullptr};
  // exec replaces sh with ibnetsim (the last command of `sh -c`), so the signal reaches ibnetsim itself.
  const std::string exec_line = "exec " + line;
  argv[2] = exec_line.c_str();
  REQUIRE(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(argv), environ) == 0);
  for (int i = 0; i < 6000 && checkpoints(cut) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(kill(pid, SIGINT) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  INFO("exit status after SIGINT: " << status);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)); // it was interrupted, as SIGINT ends a process
  const auto kept = checkpoints(cut);
  CHECK(kept >= 1);
  CHECK(kept < 24);
  CHECK(!fs::exists(cut / "whatif.json"));
  // Re-run: resumes from the checkpoints and ends with the uninterrupted run's documents.
  const auto r = ibn::test::run_cli("whatif " + std::string(IBNETSIM_SOURCE_DIR) +
                                    "/scenarios/examples/small-allreduce.json --oversubscription 1:1 -j 1"
                                    " --set 'jobs[0].workload.iterations=96' --set run.segment_iterations=8"
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
