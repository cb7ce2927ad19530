// Every "Example: ibnetsim ..." line of every command's --help runs as written (issue 18, CLI consistency).
//
// The commands are discovered from the help texts themselves (the "Subcommands" section of `ibnetsim --help`,
// then of each subcommand's help, recursively), so a new command's example is tested without editing this
// file. Each example runs in a scratch folder that holds the files the examples name (copies of real fixtures
// from tests/data, a small generated fabric), with stand-ins on PATH for what lives on other machines: `ssh`
// (runs the remote command here, answering the device check as a host that has the device) and the perftest
// programs (print a real perftest output from tests/data). Slow: the examples include the built-in what-if
// study and a plan.
#include "tests/apps/run_cli.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using ibn::test::run_cli;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// Names listed under the "Subcommands:" heading of a CLI11 help text.
std::vector<std::string> subcommands_in(const std::string& help) {
  std::vector<std::string> out;
  bool in_section = false;
  for (const auto& l : lines_of(help)) {
    if (lower(l).rfind("subcommands:", 0) == 0) {
      in_section = true;
      continue;
    }
    if (!in_section) continue;
    if (l.empty() || l[0] != ' ') {
      if (!l.empty()) in_section = false;
      continue;
    }
    std::istringstream w(l);
    std::string name;
    w >> name;
    // A continuation line of a long description is indented further than the names.
    if (!name.empty() && l.find_first_not_of(' ') <= 4 && name.find_first_of("-[") != 0) out.push_back(name);
  }
  return out;
}

/// The arguments after "ibnetsim " of every "Example: ibnetsim ..." line.
std::vector<std::string> examples_in(const std::string& help) {
  std::vector<std::string> out;
  const std::string tag = "Example: ibnetsim ";
  for (const auto& l : lines_of(help)) {
    const auto p = l.find(tag);
    if (p != std::string::npos) out.push_back(l.substr(p + tag.size()));
  }
  return out;
}

void write_script(const fs::path& p, const std::string& body) {
  {
    std::ofstream s(p);
    s << "#!/bin/sh\n" << body;
  }
  fs::permissions(p, fs::perms::owner_all);
}

void copy_fixture(const std::string& rel, const fs::path& to) {
  fs::copy_file(std::string(IBNETSIM_TEST_DATA) + "/" + rel, to, fs::copy_options::overwrite_existing);
}

} // namespace

TEST_CASE("every --help example runs as written") {
  // Discover the command tree from the help texts.
  std::vector<std::string> paths, todo{""};
  while (!todo.empty()) {
    const std::string p = todo.back();
    todo.pop_back();
    const auto r = run_cli(p + (p.empty() ? "" : " ") + "--help");
    INFO("ibnetsim " << p << " --help");
    REQUIRE(r.code == 0);
    paths.push_back(p);
    for (const auto& s : subcommands_in(r.out)) todo.push_back(p + (p.empty() ? "" : " ") + s);
  }
  // The tree as the README names it: if discovery breaks, this fails instead of testing nothing.
  for (const char* must : {"run", "whatif", "plan", "topo generate fat-tree", "topo bom", "calibrate measure",
                           "validate osu", "nccl-tests", "perftest", "report"})
    CHECK_MESSAGE(std::find(paths.begin(), paths.end(), must) != paths.end(), must);

  // A parent's help lists its subcommands' descriptions, examples included: each example is kept once.
  std::vector<std::pair<std::string, std::string>> examples; // command whose help shows it, example arguments
  std::set<std::string> seen;
  for (const auto& p : paths) {
    const auto r = run_cli(p + (p.empty() ? "" : " ") + "--help");
    for (const auto& e : examples_in(r.out))
      if (seen.insert(e).second) examples.emplace_back(p, e);
  }
  // Every leaf command that does something has an example (list, report, ...); at least those of the README.
  CHECK(examples.size() >= 20);

  // The scratch folder: the files the examples name.
  const fs::path dir = ibn::test::scratch_dir("help-examples");
  fs::create_directories(dir / "bin");
  copy_fixture("perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt", dir / "write_bw.txt");
  copy_fixture("perftest/cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt", dir / "write_lat.txt");
  copy_fixture("nccl-tests/together-h100-1node-8gpu-nvlink-all_reduce_ring.out", dir / "all_reduce.log");
  copy_fixture("nccl-tests/h100-1node-8gpu-nvlink-xxrjun-cluster01-single.log", dir / "all_gather.log");
  copy_fixture("osu/oci-bm.optimized3.36-roce100g-osu_latency-bw-allreduce4node-alltoall1node.txt",
               dir / "osu_results.txt");
  copy_fixture("ibnetdiscover/sx6036-qdr-fdr10-2014-ibnetdiscover.txt", dir / "topo.txt");
  fs::copy_file(std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples/small-allreduce.json",
                dir / "s.json");
  // Examples name the shipped scenarios as the README does, relative to the repository's top folder.
  fs::create_directories(dir / "scenarios");
  fs::copy(std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/examples", dir / "scenarios" / "examples",
           fs::copy_options::recursive);
  // Repeats of two configurations (validate repeats): the ABCI A/B pair and the Snellius pair.
  copy_fixture("nccl-tests/a100-hdr200x4-ib-2node-16gpu-all_reduce-4B-32M-abci-aist-job7194279.log",
               dir / "a1.log");
  copy_fixture(
      "nccl-tests/a100-hdr200x4-ib-2node-16gpu-all_reduce-4B-32M-ibcudasupport-abci-aist-job7109619.log",
      dir / "a2.log");
  copy_fixture("nccl-tests/h100-ndr200-ib-2node-8gpu-all_reduce-snellius-odissei.log", dir / "b1.log");
  copy_fixture("nccl-tests/h100-ndr200-ib-2node-8gpu-all_reduce-repeat-n100-snellius-odissei.log",
               dir / "b2.log");
  // Remote hosts: ssh runs the remote command here; the device check (`test -e SYSFS/DEV`) answers as a host
  // that has the device. The perftest programs print a real output (the client: its last argument is the
  // server).
  write_script(dir / "bin" / "ssh",
               "while [ \"$1\" = -o ]; do shift 2; done\nshift; [ \"$1\" = -- ] && shift\n"
               "case \"$1\" in \"'test'\"*|test*) exit 0;; esac\nexec sh -c \"$*\"\n");
  for (const char* tool : {"ib_write_bw", "ib_write_lat"})
    write_script(
        dir / "bin" / tool,
        std::string("case \"$1\" in --version) echo 'Version: 6.99 (stand-in)'; "
                    "exit 0;; esac\nfor last; do :; done\n"
                    "case \"$last\" in -*|[0-9]*) echo server done; exit 0;; esac\n"
                    "cat '") +
            (dir / (std::string(tool) == "ib_write_bw" ? "write_bw.txt" : "write_lat.txt")).string() + "'\n");
  {
    const auto r = run_cli("topo generate fat-tree --tiers 2 --radix 8 -o " + (dir / "fabric.json").string());
    REQUIRE(r.code == 0);
  }
  {
    const auto r =
        run_cli("calibrate fit " + (dir / "write_bw.txt").string() + " " + (dir / "write_lat.txt").string() +
                " --link-rate QDR -o " + (dir / "p.json").string());
    REQUIRE(r.code == 0);
  }

  // Run them; examples that write a folder another example reads (whatif-out) run first.
  std::stable_sort(examples.begin(), examples.end(), [](const auto& a, const auto& b) {
    return (a.second.rfind("whatif ", 0) == 0) > (b.second.rfind("whatif ", 0) == 0);
  });
  for (const auto& [cmd, args] : examples) {
    const std::string line = "cd '" + dir.string() + "' && PATH='" + (dir / "bin").string() + "':$PATH " +
                             IBNETSIM_BINARY + " " + args + " 2>&1";
    FILE* p = popen(line.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = pclose(p);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    INFO("ibnetsim " << args << "  (from `" << cmd << " --help`)\n" << out.substr(0, 3000));
    CHECK(code == 0);
  }
  fs::remove_all(dir);
}
