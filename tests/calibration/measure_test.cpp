// calibrate measure: argument safety, preflight refusals, and a full run with stand-in perftest programs.
#include "calibration/measure.hpp"
#include "calibration/perftest_parser.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace ibn;
using namespace ibn::calib;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& tag) {
  const fs::path p =
      fs::temp_directory_path() / ("ibnetsim-measure-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

/// Runs a command line through the shell (test side only), returns exit code and output.
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* f = ::popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  const int st = ::pclose(f);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

} // namespace

TEST_CASE("host and device names that could become options or shell words are refused") {
  const std::vector<std::string> bad_names{"", "-oProxyCommand=touch /tmp/x", "a b", "a\tb", "a\nb", "x\x01"};
  for (const auto& bad : bad_names)
    CHECK_FALSE(test::error_of([&] { check_host_name(bad, "--server"); }).empty());
  CHECK(test::error_of([] { check_host_name("-x", "--server"); }).find("starts with '-'") !=
        std::string::npos);
  const std::vector<std::string> good_names{"node1", "10.0.0.7", "gpu-01.example.org", "fe80::1"};
  for (const auto& ok : good_names) CHECK(test::error_of([&] { check_host_name(ok, "--server"); }).empty());
  CHECK_FALSE(test::error_of([] { check_device_name("mlx5_0;reboot", "--device"); }).empty());
  CHECK_FALSE(test::error_of([] { check_device_name("$(id)", "--device"); }).empty());
  CHECK(test::error_of([] { check_device_name("mlx5_0", "--device"); }).empty());
}

TEST_CASE("remote arguments are single-quoted, ssh gets host, then --, then one command string") {
  CHECK(shell_quote("abc") == "'abc'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("$(rm -rf /)") == "'$(rm -rf /)'");
  MeasureOptions o;
  o.device = "mlx5_0";
  o.ssh = true;
  const auto argv = host_argv(o, "node2", perftest_argv("ib_write_bw", o, 65536, 4, 18515, "node1"));
  REQUIRE(argv.size() == 6);
  CHECK(argv[0] == "ssh");
  CHECK(argv[3] == "node2");
  CHECK(argv[4] == "--");
  CHECK(argv[5] ==
        "'ib_write_bw' '-d' 'mlx5_0' '-p' '18515' '-F' '-s' '65536' '-q' '4' '--report_gbits' 'node1'");
  o.ssh = false;
  const auto local = host_argv(o, "node2", perftest_argv("ib_write_lat", o, 0, 1, 18516, ""));
  CHECK(local == std::vector<std::string>{"ib_write_lat", "-d", "mlx5_0", "-p", "18516", "-F", "-a"});
}

TEST_CASE("preflight: no RDMA device, wrong device, perftest missing") {
  const fs::path root = temp_dir("sysfs");
  MeasureOptions o;
  o.server = o.client = "localhost";
  o.sysfs_root = (root / "infiniband").string();
  CHECK(test::error_of([&] { preflight_local(o); }).find("no RDMA device on this machine") !=
        std::string::npos);
  fs::create_directories(root / "infiniband" / "mlx5_1");
  o.device = "mlx5_0";
  CHECK(test::error_of([&] { preflight_local(o); }).find("found: mlx5_1") != std::string::npos);
  fs::create_directories(root / "infiniband" / "mlx5_0");
  o.tools = {"ib_write_bw_not_installed_anywhere"};
  CHECK(test::error_of([&] { preflight_local(o); }).find("not found on PATH") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("calibrate measure through the binary: exit 2 without an RDMA device") {
  const fs::path root = temp_dir("nodev");
  const auto [code, out] = run(std::string(IBNETSIM_BINARY) +
                               " calibrate measure --server localhost --client localhost "
                               "--device mlx5_0 --sysfs-root " +
                               (root / "none").string() + " -o " + (root / "out").string());
  CHECK(code == 2);
  CHECK(out.find("no RDMA device") != std::string::npos);
  const auto [code2, out2] =
      run(std::string(IBNETSIM_BINARY) + " calibrate measure --server -oProxyCommand=x --client b -o " +
          (root / "out").string());
  CHECK(code2 == 2);
  CHECK(out2.find("starts with '-'") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("calibrate measure runs server and client, saves raw outputs and a manifest") {
  // Stand-in perftest: a script that prints a real ib_write_lat table when given a server address (the
  // client) and a short line otherwise (the server); --version prints a version.
  const fs::path root = temp_dir("run");
  fs::create_directories(root / "bin");
  fs::create_directories(root / "sys" / "mlx5_0");
  const std::string fixture =
      std::string(IBNETSIM_TEST_DATA) + "/perftest/cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt";
  {
    std::ofstream s(root / "bin" / "ib_write_lat");
    s << "#!/bin/sh\n"
         "case \"$1\" in --version) echo 'Version: 6.99 (stand-in)'; exit 0;; esac\n"
         "for last; do :; done\n"
         "if [ \"$last\" = \"-a\" ]; then echo server done; exit 0; fi\n"
         "echo \"args: $*\" >&2\n"
         "cat '"
      << fixture << "'\n";
  }
  fs::permissions(root / "bin" / "ib_write_lat", fs::perms::owner_all);
  const std::string cmd = "PATH=" + (root / "bin").string() + ":$PATH " + IBNETSIM_BINARY +
                          " calibrate measure --server localhost --client localhost --device mlx5_0 --tools "
                          "ib_write_lat --sysfs-root " +
                          (root / "sys").string() + " -o " + (root / "out").string();
  const auto [code, out] = run(cmd);
  INFO(out);
  REQUIRE(code == 0);
  std::ifstream m(root / "out" / "manifest.json");
  REQUIRE(m);
  const auto manifest = nlohmann::json::parse(m);
  REQUIRE(manifest["runs"].size() == 1);
  const auto& r = manifest["runs"][0];
  CHECK(r["client"]["exit_code"] == 0);
  CHECK(r["server"]["exit_code"] == 0);
  CHECK(r["client"]["argv"].back() == "localhost");
  CHECK(manifest["versions"]["localhost"]["output"] == "Version: 6.99 (stand-in)");
  const auto runs = parse_perftest_file((root / "out" / r["client"]["stdout"].get<std::string>()).string());
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].rows.size() == 23);
  fs::remove_all(root);
}
