// `ibnetsim nccl-tests all_reduce_perf|all_gather_perf|reduce_scatter_perf|alltoall_perf|sendrecv_perf|
// broadcast_perf|reduce_perf`:
// nccl-tests' command line and table layout, simulated (analysis/nccl_tests.hpp).
#include "analysis/nccl_tests.hpp"
#include "apps/commands.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>

namespace ibn::app {
namespace {
struct NcclOpts {
  analysis::NcclTestsOptions o;
  std::string b = "8", e = "128M", f = "2";
  std::string json_out;
  bool quiet = false;
};
} // namespace

void add_nccl_tests_command(CLI::App& app) {
  auto p = std::make_shared<NcclOpts>();
  auto* cmd = app.add_subcommand(
      "nccl-tests", "nccl-tests front-end: simulated all_reduce_perf and friends in nccl-tests' layout.\n"
                    "Example: ibnetsim nccl-tests all_reduce_perf -b 1M -e 64M -f 2 -g 8 --nodes 4");
  cmd->add_option("TEST", p->o.test,
                  "all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf, "
                  "broadcast_perf, reduce_perf")
      ->required();
  cmd->add_option("-b,--minbytes", p->b, "smallest size")->capture_default_str();
  cmd->add_option("-e,--maxbytes", p->e, "largest size")->capture_default_str();
  cmd->add_option("-f,--stepfactor", p->f, "size multiplier between rows")->capture_default_str();
  cmd->add_option("-g,--ngpus", p->o.gpus_per_node, "GPUs per node")->capture_default_str();
  cmd->add_option("--nodes", p->o.nodes, "nodes")->capture_default_str();
  cmd->add_option("--nics", p->o.nics_per_node, "NICs per node, 1..64 (default: one per GPU)")
      ->check(CLI::Range(1u, 64u));
  cmd->add_option("-n,--iters", p->o.iters, "iterations per size (each of out-of-place and in-place)")
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", p->o.warmup, "warm-up iterations per size")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000000u));
  cmd->add_option("--fabric", p->o.fabric, "fabric file (default: a non-blocking NDR fat-tree that fits)");
  cmd->add_option("--profile", p->o.profile, "calibration profile JSON");
  cmd->add_option("--engine", p->o.engine, "packet or flow")
      ->check(CLI::IsMember({"packet", "flow"}))
      ->capture_default_str();
  cmd->add_option("--algo", p->o.algorithm,
                  "ring, tree, halving-doubling, hierarchical, nvls, collnet, direct, auto (NCCL_ALGO, any "
                  "case); nvls and collnet "
                  "need --set nccl.nvls=true / nccl.collnet=true (a system that offers them)")
      ->capture_default_str();
  cmd->add_option("--proto", p->o.protocol, "simple, ll128, ll, auto (NCCL_PROTO, any case)")
      ->capture_default_str();
  cmd->add_option("--channels", p->o.channels, "channels (0 = as NCCL would)")->check(CLI::Range(0u, 64u));
  cmd->add_option("--seed", p->o.seed, "seed")->capture_default_str()->check(kSeed);
  cmd->add_option("--set", p->o.sets, "override a scenario key (repeatable)");
  cmd->add_option("-o,--output", p->json_out, "also write results.json into this folder")
      ->check(kOutputFolder);
  cmd->add_flag("-q,--quiet", p->quiet, "no progress lines");
  cmd->callback([p] {
    // The front-end's own options set these keys, and its table is printed from the options: a --set of one
    // would simulate something else than the table says.
    // The keys the front-end's options set, by their option's name.
    for (const auto& kv : p->o.sets)
      for (const auto& [key, opt] : {std::pair<const char*, const char*>{"jobs[0].workload.warmup", "-w"},
                                     {"jobs[0].workload.channels", "--channels"},
                                     {"jobs[0].workload.protocol", "--proto"},
                                     {"jobs[0].workload.algorithm", "--algo"}})
        if (kv.find('=') != std::string::npos && canonical_set_key(kv.substr(0, kv.find('='))) == key)
          throw InputError("--set " + kv + ": '" + key + "' is set by " + opt + ", not by --set");
    refuse_set_twice(p->o.sets);
    analysis::refuse_job_keys_in_sets(p->o.sets, "--set", "the command's TEST, -b/-e/-f, -g, --nodes, -n",
                                      true);
    // nccl-tests' own -o is the reduction operation; here it is the output folder. A folder named like an
    // operation is almost surely that flag from a real command line: refused rather than created.
    for (const char* op : {"sum", "prod", "min", "max", "avg", "all"})
      if (p->json_out == op)
        throw InputError(
            std::string("-o ") + op +
            ": -o is the output folder here (nccl-tests' -o, the "
            "reduction operation, is not an option: the simulation reduces with sum); write -o ./" +
            op + " for a folder of that name");
    // NCCL_ALGO and NCCL_PROTO are case-insensitive (NCCL_ALGO=Ring, NCCL_PROTO=LL128).
    for (auto* v : {&p->o.algorithm, &p->o.protocol})
      std::transform(v->begin(), v->end(), v->begin(), [](unsigned char c) { return std::tolower(c); });
    p->o.min_bytes = parse_size_bytes(p->b, "-b");
    p->o.max_bytes = parse_size_bytes(p->e, "-e");
    p->o.factor = static_cast<std::uint64_t>(parse_positive_int(p->f, "-f"));
    std::function<void(const std::string&)> progress;
    if (!p->quiet) progress = [](const std::string& line) { std::cerr << "  " << line << "\n"; };
    const auto r = analysis::run_nccl_tests(p->o, progress);
    for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
    std::cout << analysis::format_nccl_tests(p->o, r);
    if (!p->json_out.empty()) write_file_atomic(p->json_out + "/results.json", r.results.dump(2) + "\n");
  });
}

} // namespace ibn::app
