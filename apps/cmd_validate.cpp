// `ibnetsim validate nccl-tests LOG [--fabric F] [--profile P] [--json]`: measured vs simulated busbw per
// size. `ibnetsim validate osu LOG [--nodes N --ppn K] [--fabric F] [--profile P] [--json]`: measured vs
// simulated latency per size of an OSU / IMB output.
#include "analysis/nccl_tests.hpp"
#include "analysis/validate.hpp"
#include "analysis/validate_repeats.hpp"
#include "apps/commands.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"

#include <iostream>
#include <memory>

namespace ibn::app {
namespace {
// Bounds of the count flags (docs/cli.md), checked before anything runs.
// validate osu --samples: every round trip keeps a sample (perftest's 10,000,000 messages per size).
constexpr std::uint32_t kMaxOsuSamples = 10'000'000;
// validate osu --repeats: every run is a perftest sweep of the sizes.
constexpr std::uint32_t kMaxOsuRepeats = 100;
// validate repeats --draws: three doubles per draw and size, and n launch draws each.
constexpr std::uint32_t kMaxRepeatsDraws = 1'000'000;
} // namespace

void add_validate_command(CLI::App& app) {
  auto* v = app.add_subcommand("validate", "Compare real measurements with simulated ones.");
  v->require_subcommand(1);
  auto o = std::make_shared<analysis::ValidateOptions>();
  auto log = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto max = std::make_shared<std::string>();
  auto* c = v->add_subcommand("nccl-tests",
                              "Simulate the job of a real nccl-tests output and compare busbw per size.\n"
                              "Example: ibnetsim validate nccl-tests all_reduce.log --profile p.json --json");
  c->add_option("LOG", *log, "nccl-tests output (with its NCCL INFO lines when available)")->required();
  c->add_option("--fabric", o->fabric, "fabric file (default: a non-blocking NDR fat-tree that fits)");
  c->add_option("--profile", o->profile, "calibration profile JSON");
  c->add_option("--engine", o->engine, "packet or flow")
      ->check(CLI::IsMember({"packet", "flow"}))
      ->capture_default_str();
  c->add_option("-n,--iters", o->iters, "simulated iterations per size")->capture_default_str();
  c->add_option("--nics", o->nics_per_node, "NICs per node, 1..64 (default: from the log, else one per GPU)")
      ->check(CLI::Range(1u, 64u));
  c->add_option(
       "--nodes", o->nodes,
       "nodes the run used, for a log that does not say (no '# Rank' lines); must agree with one that does")
      ->check(CLI::Range(1u, 100000u));
  c->add_option("--max-bytes", *max, "skip sizes above this");
  c->add_option("--test", o->tests, "compare this test only (repeatable; default: every test in LOG)");
  c->add_option("--set", o->sets, "override a scenario key, e.g. nvlink.bandwidth_gbps=2900 (repeatable)");
  c->add_flag("--json", *json, "print JSON rows and summary");
  c->callback([o, log, json, max] {
    refuse_set_twice(o->sets);
    analysis::refuse_job_keys_in_sets(o->sets, "--set", "the log (its test, sizes, nodes, GPUs; -n)", false);
    if (!max->empty()) {
      o->max_bytes = parse_size_bytes(*max, "--max-bytes");
      if (o->max_bytes == 0) throw InputError("--max-bytes: 0 leaves no size to compare");
    }
    const auto v = analysis::validate_nccl_tests(*log, *o);
    if (*json)
      std::cout << v.dump(2) << "\n";
    else
      std::cout << analysis::validate_table(v);
  });

  auto u = std::make_shared<analysis::OsuValidateOptions>();
  auto ulog = std::make_shared<std::string>();
  auto ujson = std::make_shared<bool>(false);
  auto umax = std::make_shared<std::string>();
  auto* osu = v->add_subcommand(
      "osu", "Simulate the measurement of a real OSU micro-benchmark or IMB-MPI1 output (pt2pt latency and "
             "bandwidth "
             "between two nodes, MPI AllReduce over host memory) and compare per size.\n"
             "Nodes and ranks per node: --nodes/--ppn, else the launcher line in the file (mpirun -np 144 "
             "-ppn 36).\n"
             "Example: ibnetsim validate osu osu_results.txt --test osu_allreduce --nodes 4 --ppn 36 --rate "
             "EDR --json");
  osu->add_option("LOG", *ulog, "OSU or IMB-MPI1 output")->required();
  osu->add_option("--nodes", u->nodes, "nodes of the measured run (with --ppn)")->check(kCount);
  osu->add_option("--ppn", u->ppn, "MPI ranks per node (with --nodes)")->check(kCount);
  osu->add_option("--fabric", u->fabric,
                  "fabric file (default: two nodes back to back for pt2pt, a non-blocking fat-tree for "
                  "collectives)");
  osu->add_option("--rate", u->rate,
                  "link rate of the default fabric (NDR, HDR, EDR, ...; default: the "
                  "profile's, else NDR)");
  osu->add_option("--profile", u->profile, "calibration profile JSON");
  osu->add_option("--engine", u->engine, "packet or flow (collectives; pt2pt runs on the packet engine)")
      ->check(CLI::IsMember({"packet", "flow"}))
      ->capture_default_str();
  osu->add_option("-n,--iters", u->iters, "simulated iterations per size (collectives)")
      ->capture_default_str();
  osu->add_option("--samples", u->samples, "simulated round trips per size (latency)")->capture_default_str();
  osu->add_option("--repeats", u->repeats, "simulated runs per size with different seeds (bandwidth)")
      ->capture_default_str();
  osu->add_option("--algorithm", u->algorithm,
                  "AllReduce algorithm: mpi (halving-doubling for 2^k ranks, else hierarchical with several "
                  "ranks per node, else ring), ring, hierarchical, halving-doubling, tree")
      ->check(CLI::IsMember({"mpi", "ring", "hierarchical", "halving-doubling", "tree"}))
      ->capture_default_str();
  osu->add_option("--shm-gbps", u->shm_gbps, "intra-node (shared memory) copy bandwidth, Gb/s")
      ->capture_default_str();
  osu->add_option("--shm-latency-us", u->shm_latency_us, "intra-node copy latency, us")
      ->capture_default_str();
  osu->add_option("--max-bytes", *umax, "skip sizes above this");
  osu->add_option("--test", u->tests,
                  "compare this benchmark only (osu_allreduce, PingPong, ...; repeatable)");
  osu->add_option("--set", u->sets, "override a scenario key of the collective runs (repeatable)");
  osu->add_flag("--json", *ujson, "print JSON rows and summary");
  osu->callback([u, ulog, ujson, umax] {
    if (!umax->empty()) {
      u->max_bytes = parse_size_bytes(*umax, "--max-bytes");
      if (u->max_bytes == 0) throw InputError("--max-bytes: 0 leaves no size to compare");
    }
    if (!(u->shm_gbps > 0)) throw InputError("--shm-gbps: must be positive");
    if (!(u->shm_latency_us >= 0)) throw InputError("--shm-latency-us: must not be negative");
    if (u->iters == 0) throw InputError("-n: at least one iteration");
    if (u->samples == 0 || u->samples > kMaxOsuSamples)
      throw InputError("--samples: " + std::to_string(u->samples) + " round trips per size; must be 1.." +
                       std::to_string(kMaxOsuSamples));
    if (u->repeats == 0 || u->repeats > kMaxOsuRepeats)
      throw InputError("--repeats: " + std::to_string(u->repeats) + " runs per size; must be 1.." +
                       std::to_string(kMaxOsuRepeats));
    if (!u->rate.empty() && !u->fabric.empty())
      throw InputError("--rate applies to the default fabric, not to --fabric " + u->fabric +
                       " (its links have their own rates)");
    refuse_set_twice(u->sets);
    const auto v = analysis::validate_osu(*ulog, *u);
    if (*ujson)
      std::cout << v.dump(2) << "\n";
    else
      std::cout << analysis::validate_osu_table(v);
  });

  auto rp = std::make_shared<analysis::RepeatsOptions>();
  auto rlogs = std::make_shared<std::vector<std::string>>();
  auto rjson = std::make_shared<bool>(false);
  auto rloo = std::make_shared<bool>(false);
  auto rmax = std::make_shared<std::string>("32M");
  auto* rep = v->add_subcommand(
      "repeats", "Leave-one-out check of the variability model on repeated nccl-tests runs: each run held "
                 "back in turn, the "
                 "model fitted on the others, the run's configuration simulated; is each measured time "
                 "inside the predicted "
                 "[p1, p99], and how far is the predicted p99/p50 from the measured one.\n"
                 "Example: ibnetsim validate repeats a1.log a2.log b1.log b2.log --leave-one-out --json");
  rep->add_option("LOGS", *rlogs, "nccl-tests outputs (one test each), at least three")->required();
  rep->add_flag("--leave-one-out", *rloo, "hold back each run in turn (the only mode; required)");
  rep->add_option("--fabric", rp->sim.fabric, "fabric file (default: a non-blocking NDR fat-tree that fits)");
  rep->add_option("--profile", rp->sim.profile, "calibration profile JSON for the base simulation");
  rep->add_option("--engine", rp->sim.engine, "packet or flow")
      ->check(CLI::IsMember({"packet", "flow"}))
      ->capture_default_str();
  rep->add_option("-n,--iters", rp->sim.iters, "simulated iterations per size")->capture_default_str();
  rep->add_option("--draws", rp->draws, "Monte Carlo runs per size")->capture_default_str();
  rep->add_option("--max-bytes", *rmax, "compare sizes up to this (simulation cost)")->capture_default_str();
  rep->add_option("--set", rp->sim.sets, "override a scenario key of the base simulation (repeatable)");
  auto rfabric_for = std::make_shared<std::vector<std::string>>();
  auto rnics_for = std::make_shared<std::vector<std::string>>();
  auto rset_for = std::make_shared<std::vector<std::string>>();
  auto rfit_max = std::make_shared<std::string>("64K");
  rep->add_option("--fabric-for", *rfabric_for,
                  "LOG=FABRIC: the fabric of LOG's configuration (LOG: an input, by path or file name; "
                  "repeatable)");
  rep->add_option("--nics-for", *rnics_for, "LOG=K: NICs per node of LOG's configuration (repeatable)");
  rep->add_option(
      "--set-for", *rset_for,
      "LOG=KEY=VALUE: a scenario key of LOG's configuration, e.g. nccl.version=2.8.4 (repeatable)");
  rep->add_flag("--fit-costs", rp->fit_costs,
                "fit NCCL's costs per held-back run on the other runs of its configuration (as calibrate fit "
                "does from nccl-tests logs) and simulate it with them");
  rep->add_option("--fit-max-bytes", *rfit_max, "with --fit-costs: fit on rows up to this size")
      ->capture_default_str();
  rep->add_flag("--json", *rjson, "print JSON rows, per-run results and summary");
  rep->callback([rp, rlogs, rjson, rloo, rmax, rfabric_for, rnics_for, rset_for, rfit_max, rep] {
    auto split = [](const std::string& opt, const std::string& v) {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw InputError(opt + ": expected LOG=VALUE, got '" + v + "'");
      return std::pair{v.substr(0, eq), v.substr(eq + 1)};
    };
    // One value per LOG: a second --fabric-for / --nics-for of one LOG used to replace the first silently.
    auto once = [](const std::string& opt, const std::string& log, bool given_before, const std::string& v) {
      if (given_before) throw InputError(opt + " " + v + ": " + log + " already has one; give each LOG once");
    };
    for (const auto& v : *rfabric_for) {
      const auto [log, f] = split("--fabric-for", v);
      once("--fabric-for", log, !rp->per_log[log].fabric.empty(), v);
      rp->per_log[log].fabric = f;
    }
    for (const auto& v : *rnics_for) {
      const auto [log, k] = split("--nics-for", v);
      once("--nics-for", log, rp->per_log[log].nics_per_node != 0, v);
      rp->per_log[log].nics_per_node = static_cast<std::uint32_t>(parse_positive_int(k, "--nics-for " + v));
    }
    refuse_set_twice(rp->sim.sets);
    analysis::refuse_job_keys_in_sets(rp->sim.sets, "--set", "the logs (their test, sizes, nodes, GPUs; -n)",
                                      false);
    for (const auto& v : *rset_for) {
      const auto [log, kv] = split("--set-for", v);
      if (kv.find('=') == std::string::npos) throw InputError("--set-for " + v + ": expected LOG=KEY=VALUE");
      analysis::refuse_job_keys_in_sets({kv}, "--set-for " + log, "the log (its test, sizes, nodes, GPUs)",
                                        false);
      rp->per_log[log].sets.push_back(kv);
      refuse_set_twice(rp->per_log[log].sets, "--set-for " + log + ":");
    }
    if (!rp->fit_costs && rep->count("--fit-max-bytes"))
      throw InputError("--fit-max-bytes: only with --fit-costs");
    rp->fit_max_bytes = parse_size_bytes(*rfit_max, "--fit-max-bytes");
    if (rp->fit_max_bytes == 0) throw InputError("--fit-max-bytes: 0 leaves no row to fit on");
    if (!*rloo) throw InputError("validate repeats: --leave-one-out is required (the only mode)");
    if (rp->draws < 100 || rp->draws > kMaxRepeatsDraws)
      throw InputError("--draws: " + std::to_string(rp->draws) + " Monte Carlo runs per size; must be 100 " +
                       "(p1 and p99 need them) .. " + std::to_string(kMaxRepeatsDraws));
    if (rp->sim.iters == 0) throw InputError("-n: at least one iteration");
    rp->max_bytes = parse_size_bytes(*rmax, "--max-bytes");
    const auto r = analysis::validate_repeats(*rlogs, *rp);
    if (*rjson)
      std::cout << r.dump(2) << "\n";
    else
      std::cout << analysis::validate_repeats_table(r);
  });
}

} // namespace ibn::app
