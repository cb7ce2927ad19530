// Robustness of the binary (issue 20, docs/robustness.md): outputs that never clobber what they should not,
// bad numbers and bytes refused with exit 2 naming the file and key, bounded fabric and run sizes, clear
// messages, and interrupted runs that leave no child process behind. Each case fails on the code before
// the fix. These tests never write to the machine's device nodes: FIFOs, symbolic links and device nodes
// are made in a scratch folder.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

extern char** environ;

using ibn::test::read_text_file;
using ibn::test::run_cli;
using ibn::test::scratch_dir;
namespace fs = std::filesystem;

namespace {

const std::string kSmallTree = "topo generate fat-tree --tiers 2 --radix 4 ";

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

bool is_fabric_json(const std::string& s) { return s.find("\"schema\": \"ibnetsim.fabric\"") != std::string::npos; }

/// run_cli with the wall time it took.
std::pair<ibn::test::CliResult, double> timed_cli(const std::string& args) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_cli(args);
  return {r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

} // namespace

TEST_CASE("-o writes through a FIFO and leaves it a FIFO") {
  const auto dir = scratch_dir("robust_fifo");
  const auto fifo = dir / "out.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // A non-blocking reader, so the test cannot hang whatever the binary does.
  const int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(fd >= 0);
  std::atomic<bool> done{false};
  std::string got;
  std::thread reader([&] {
    char buf[65536];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        got.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (done) {
        while (read(fd, buf, sizeof buf) > 0) {
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const auto r = run_cli(kSmallTree + "-o " + fifo.string());
  done = true;
  reader.join();
  close(fd);
  CHECK(r.code == 0);
  CHECK(is_fabric_json(got));
  struct stat st {};
  REQUIRE(lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
}

TEST_CASE("-o through a symbolic link replaces the link's target and keeps the link") {
  const auto dir = scratch_dir("robust_symlink");
  write(dir / "real.json", "old");
  fs::create_symlink("real.json", dir / "link.json");
  auto r = run_cli(kSmallTree + "-o " + (dir / "link.json").string());
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(dir / "link.json"));
  CHECK(is_fabric_json(read_text_file((dir / "real.json").string())));
  // A dangling link: its target is created.
  fs::create_symlink("sub/new.json", dir / "dangling.json");
  r = run_cli(kSmallTree + "-o " + (dir / "dangling.json").string());
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(dir / "dangling.json"));
  CHECK(is_fabric_json(read_text_file((dir / "sub/new.json").string())));
}

TEST_CASE("-o on a device node writes to the device and leaves the node") {
  if (geteuid() != 0) {
    MESSAGE("skipped: creating a device node (mknod) needs root");
    return;
  }
  const auto dir = scratch_dir("robust_mknod");
  const auto null_node = dir / "null", full_node = dir / "full";
  // The numbers of /dev/null (1,3) and /dev/full (1,7), as new nodes in the scratch folder.
  if (mknod(null_node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
      mknod(full_node.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    MESSAGE("skipped: mknod is not permitted here");
    return;
  }
  auto r = run_cli(kSmallTree + "-o " + null_node.string());
  CHECK(r.code == 0);
  struct stat st {};
  REQUIRE(lstat(null_node.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // A device that refuses the bytes (ENOSPC) is bad output: exit 2 naming it; the node stays.
  r = run_cli(kSmallTree + "-o " + full_node.string());
  CHECK(r.code == 2);
  CHECK(r.out.find(full_node.string() + ": write failed") != std::string::npos);
  REQUIRE(lstat(full_node.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("-o standard output by name") {
  // /dev/fd/1 and /proc/self/fd/1 (the same as /dev/stdout, which this test does not touch).
  for (const char* name : {"/dev/fd/1", "/proc/self/fd/1"}) {
    INFO(name);
    const auto r = run_cli(kSmallTree + "-o " + name);
    CHECK(r.code == 0);
    CHECK(is_fabric_json(r.out));
  }
}

TEST_CASE("-o naming a folder says so") {
  const auto dir = scratch_dir("robust_outdir");
  const auto r = run_cli(kSmallTree + "-o " + dir.string());
  CHECK(r.code == 2);
  CHECK(r.out.find(dir.string() + ": is a folder; give a file name") != std::string::npos);
}

TEST_CASE("-o equal to an input is refused and the input is kept") {
  const auto dir = scratch_dir("robust_same");
  const auto txt = dir / "fabric.txt";
  fs::copy_file(std::string(IBNETSIM_TEST_DATA) + "/ibnetdiscover/edr-ports-snippet-treydock-test.out.txt", txt);
  const std::string before = read_text_file(txt.string());
  auto r = run_cli("topo import ibnetdiscover " + txt.string() + " -o " + txt.string());
  CHECK(r.code == 2);
  CHECK(r.out.find("is the input file") != std::string::npos);
  CHECK(read_text_file(txt.string()) == before);
  // The same file under another name (a hard link) is the same input.
  fs::create_hard_link(txt, dir / "alias.txt");
  r = run_cli("topo import ibnetdiscover " + txt.string() + " -o " + (dir / "alias.txt").string());
  CHECK(r.code == 2);
  CHECK(read_text_file(txt.string()) == before);

  const auto perf = dir / "perf.txt";
  fs::copy_file(std::string(IBNETSIM_TEST_DATA) + "/perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt", perf);
  const std::string perf_before = read_text_file(perf.string());
  r = run_cli("calibrate fit " + perf.string() + " --link-rate QDR -o " + perf.string());
  CHECK(r.code == 2);
  CHECK(r.out.find("is the input file") != std::string::npos);
  CHECK(read_text_file(perf.string()) == perf_before);
}

TEST_CASE("a JSON number that overflows a double is exit 2 naming the file, position and key") {
  const auto dir = scratch_dir("robust_overflow");
  const auto fab = dir / "f.json";
  REQUIRE(run_cli(kSmallTree + "-o " + fab.string()).code == 0);
  std::string text = read_text_file(fab.string());
  const auto at = text.find("\"length_m\":");
  REQUIRE(at != std::string::npos);
  const auto end = text.find_first_of(",}", at);
  text.replace(at, end - at, "\"length_m\":1e309");
  write(fab, text);
  auto r = run_cli("topo info " + fab.string());
  CHECK(r.code == 2);
  CHECK(r.out.find(fab.string() + ":") != std::string::npos);
  CHECK(r.out.find("length_m") != std::string::npos);
  CHECK(r.out.find("overflow") != std::string::npos);

  const auto scen = dir / "s.json";
  write(scen, "{\n  \"seed\": 1e309\n}\n");
  r = run_cli("run " + scen.string() + " -o " + (dir / "out").string());
  CHECK(r.code == 2);
  CHECK(r.out.find(scen.string() + ":2:") != std::string::npos);
  CHECK(r.out.find("seed") != std::string::npos);
}

TEST_CASE("a perftest log with bytes that are not UTF-8 gives a profile, never an internal error") {
  const auto dir = scratch_dir("robust_utf8");
  std::string text = read_text_file(std::string(IBNETSIM_TEST_DATA) + "/perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt");
  const auto at = text.find("mlx4_0");
  REQUIRE(at != std::string::npos);
  text.replace(at, 6, "mlx4_\xff");
  write(dir / "bad.txt", text);
  const auto r = run_cli("calibrate fit " + (dir / "bad.txt").string() + " --link-rate QDR -o " +
                         (dir / "p.json").string());
  CHECK(r.code == 0);
  const auto p = nlohmann::json::parse(read_text_file((dir / "p.json").string()));
  CHECK(p.dump().find("mlx4_\xef\xbf\xbd") != std::string::npos); // U+FFFD in place of the bad byte
}

TEST_CASE("generators refuse fabrics beyond the limits within 5 s, naming the estimate and the flag") {
  struct Case {
    const char* args;
    const char* expect;
  };
  for (const Case c : {Case{"fat-tree --tiers 2 --radix 8 --rails 2147483647", "--max-hosts"},
                       Case{"fat-tree --tiers 3 --radix 4096", "--max-hosts"},
                       Case{"dragonfly --a 64 --p 32 --h 32", "--max-hosts"},
                       Case{"dragonfly --a 4 --p 100000 --h 2", "max 4096"},
                       Case{"dragonfly --a 2147483647 --p 1 --h 1", "max 4096"},
                       Case{"fat-tree --oversubscription 99999999999:1", "larger than any switch radix"},
                       Case{"fat-tree --tiers 2 --radix 8 --rails 3 --max-hosts 90", "--max-hosts"}}) {
    INFO(c.args);
    const auto [r, s] = timed_cli(std::string("topo generate ") + c.args + " -o -");
    CHECK(r.code == 2);
    CHECK(r.out.find(c.expect) != std::string::npos);
    CHECK(s < 5.0);
  }
  // The estimate names hosts, HCAs, switches and links.
  const auto r = run_cli("topo generate fat-tree --tiers 3 --radix 4096 -o -");
  CHECK(r.out.find("17,179,869,184 hosts") != std::string::npos);
  // Raising the limit lets the same request through.
  CHECK(run_cli("topo generate fat-tree --tiers 2 --radix 8 --rails 3 --max-hosts 96 -o -").code == 0);
}

TEST_CASE("runs beyond the event limit are refused within 5 s, others report their estimate first") {
  const auto dir = scratch_dir("robust_run");
  const auto scen = dir / "huge.json";
  write(scen, R"({"fabric": {"generator": "fat-tree", "params": {"radix": 8}},
  "jobs": [{"name": "a", "nodes": 16, "gpus_per_node": 1, "nics_per_node": 1,
            "workload": {"op": "allreduce", "sizes": ["1T"], "iterations": 1, "warmup": 0}}]})");
  auto [r, s] = timed_cli("run " + scen.string() + " -o " + (dir / "out").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("IBNETSIM_MAX_EVENTS") != std::string::npos);
  CHECK(r.out.find("events") != std::string::npos);
  CHECK(s < 5.0);
  // A million-host dragonfly is refused by the fabric bound, naming the scenario key.
  const auto df = dir / "df.json";
  write(df, R"({"fabric": {"generator": "dragonfly", "params": {"a": 100, "p": 10, "h": 10}}})");
  std::tie(r, s) = timed_cli("run " + df.string() + " -o " + (dir / "out2").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("fabric.params.max-hosts") != std::string::npos);
  CHECK(s < 5.0);
  // A small run prints its estimate before its first result.
  const auto small = dir / "small.json";
  write(small, R"({"fabric": {"generator": "fat-tree", "params": {"radix": 4}},
  "jobs": [{"name": "a", "nodes": 2, "gpus_per_node": 1, "nics_per_node": 1,
            "workload": {"op": "allreduce", "sizes": ["64K"], "iterations": 2, "warmup": 0}}]})");
  r = run_cli("run " + small.string() + " -o " + (dir / "out3").string());
  CHECK(r.code == 0);
  CHECK(r.out.find("estimate: 2 collectives") != std::string::npos);
}

TEST_CASE("topo import refuses a LID outside the unicast range, naming the line") {
  const auto dir = scratch_dir("robust_lid");
  std::string text = read_text_file(std::string(IBNETSIM_TEST_DATA) + "/ibnetdiscover/edr-ports-snippet-treydock-test.out.txt");
  // Ports format: "CA   134  1 0x..." -> the first LID becomes 65536.
  const auto at = text.find("134");
  REQUIRE(at != std::string::npos);
  text.replace(at, 3, "65536");
  write(dir / "t.txt", text);
  const auto r = run_cli("topo import ibnetdiscover " + (dir / "t.txt").string() + " -o " + (dir / "f.json").string());
  CHECK(r.code == 2);
  CHECK(r.out.find((dir / "t.txt").string() + ":") != std::string::npos);
  CHECK(r.out.find("lid 65536 is outside the unicast LID range") != std::string::npos);
  CHECK(!fs::exists(dir / "f.json"));
}

TEST_CASE("topo info on an imported fabric that is not connected: exit 0, connected false") {
  const auto dir = scratch_dir("robust_disconnected");
  const auto fab = (dir / "f.json").string();
  auto r = run_cli("topo import ibnetdiscover " + std::string(IBNETSIM_TEST_DATA) +
                   "/ibnetdiscover/edr-ports-snippet-treydock-test.out.txt -o " + fab);
  REQUIRE(r.code == 0);
  r = run_cli("topo info " + fab + " --json");
  CHECK(r.code == 0);
  CHECK(r.out.find("warning: " + fab + ": fabric is not connected") != std::string::npos);
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  CHECK(j["connected"] == false);
}

TEST_CASE("zero is not a silent default, absurd cable lengths are refused") {
  for (const char* args : {"fat-tree --leaf-ports 0", "dragonfly --a 0 --p 2", "dragonfly --p 0 --a 4",
                           "dragonfly --h 0 --p 2", "dragonfly --g 0 --p 2", "fat-tree --cable-m host=1e308"}) {
    INFO(args);
    const auto r = run_cli(std::string("topo generate ") + args + " -o -");
    CHECK(r.code == 2);
  }
  CHECK(run_cli("topo generate fat-tree --leaf-ports 0 -o -").out.find("--leaf-ports") != std::string::npos);
  CHECK(run_cli("topo generate dragonfly --a 0 --p 2 -o -").out.find("--a must be at least 1") != std::string::npos);
  CHECK(run_cli("topo generate fat-tree --cable-m host=1e308 -o -").out.find("longer than the longest") !=
        std::string::npos);
}

TEST_CASE("clear messages: ratios with two colons, --max-bytes leaving no rows") {
  auto r = run_cli("topo generate fat-tree --oversubscription 1:1:1 -o -");
  CHECK(r.code == 2);
  CHECK(r.out.find("'1:1:1' has more than one ':'") != std::string::npos);
  r = run_cli("validate nccl-tests " + std::string(IBNETSIM_TEST_DATA) +
              "/nccl-tests/together-h100-1node-8gpu-nvlink-all_reduce_ring.out --max-bytes 1");
  CHECK(r.code == 2);
  CHECK(r.out.find("--max-bytes 1B leaves no row to compare") != std::string::npos);
}

namespace {

/// Children (by /proc/<pid>/stat's parent field) of `parent`.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

/// Running (not gone, not a zombie).
bool running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

void interrupt_flow_whatif(int sig) {
  const auto dir = scratch_dir("robust_signal_" + std::to_string(sig));
  const std::string out = (dir / "study").string(), log = (dir / "log.txt").string();
  std::vector<std::string> args = {IBNETSIM_BINARY, "whatif", "--engine", "flow", "-o", out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  // Default dispositions: a test runner started in the background may pass SIGINT on as ignored.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t parent = 0;
  REQUIRE(posix_spawn(&parent, argv[0], &fa, &attr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  // Wait (up to 60 s) until the flow engine's child process exists.
  std::vector<pid_t> kids;
  const auto t0 = std::chrono::steady_clock::now();
  while (kids.empty() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kids = children_of(parent);
  }
  if (kids.empty()) {
    kill(parent, SIGKILL);
    waitpid(parent, nullptr, 0);
    FAIL("no child process appeared within 60 s");
  }
  REQUIRE(kill(parent, sig) == 0);
  int status = 0;
  const auto t1 = std::chrono::steady_clock::now();
  pid_t w = 0;
  while ((w = waitpid(parent, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() - t1 < std::chrono::seconds(20))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (w == 0) {
    kill(parent, SIGKILL);
    waitpid(parent, &status, 0);
    FAIL("the parent did not exit within 20 s of the signal");
  }
  CHECK(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == sig);
  // The children must be gone already, not left running after the parent.
  for (const pid_t k : kids) {
    INFO("child " << k);
    CHECK(!running(k));
    if (running(k)) kill(k, SIGKILL); // clean up after a failure
  }
}

} // namespace

TEST_CASE("SIGTERM and SIGINT to whatif --engine flow leave no child running") {
  interrupt_flow_whatif(SIGTERM);
  interrupt_flow_whatif(SIGINT);
}
