// `ibnetsim sweep SCENARIO.json --vary key=v1,v2 [--vary ...] [--seeds N] [--jobs J] -o OUT_DIR`: the Cartesian
// product of the varied keys (x seeds), each point a full run in OUT_DIR/points/<id>/results.json, and one
// summary (OUT_DIR/summary.csv and summary.json: a row per point and measured collective).
//
// Under `mpirun -np N ibnetsim sweep ...` (OpenMPI) rank r runs the points i with i mod N == r (ranks are read
// from OpenMPI's OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE); each rank marks its end in OUT_DIR/ranks/, and
// rank 0 waits for every rank's mark, then writes the summary. Interrupted sweeps resume (points already
// written with the same configuration are reused); every file is written atomically.
#include "analysis/points.hpp"
#include "analysis/results.hpp"
#include "apps/commands.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

namespace ibn::app {
namespace {

struct SweepOpts {
  std::string scenario;
  std::vector<std::string> vary;
  unsigned seeds = 1;
  unsigned jobs = 0;
  std::string out = "sweep-out";
  bool quiet = false;
  double wait_s = 86400;
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

std::string sanitize(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  return o;
}

} // namespace

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOpts>();
  auto* cmd = app.add_subcommand(
      "sweep", "Cartesian sweep of scenario keys (x seeds), in parallel and under mpirun.\n"
               "Example: ibnetsim sweep s.json --vary jobs[0].workload.sizes=1M,4M --vary routing.adaptive=off,per-packet "
               "--seeds 3 -o sweep-out");
  cmd->add_option("SCENARIO", o->scenario, "scenario JSON")->required();
  cmd->add_option("--vary", o->vary, "KEY=V1,V2,... (repeatable; values split at commas)")->required();
  cmd->add_option("--seeds", o->seeds, "seeds 1..N per point")->capture_default_str();
  cmd->add_option("-j,--jobs", o->jobs, "points run in parallel on this machine (default: cores)");
  cmd->add_option("-o,--output", o->out, "output folder")->capture_default_str()->check(kOutputFolder);
  cmd->add_option("--wait-s", o->wait_s, "rank 0: how long to wait for the other MPI ranks")->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "no progress lines");
  cmd->callback([o, cmd] {
    if (o->seeds < 1) throw InputError("--seeds: " + std::to_string(o->seeds) + " (at least 1)");
    refuse_folders_in_output(o->out, {"summary.json", "summary.csv"});
    if (!(o->wait_s > 0) || !std::isfinite(o->wait_s))
      throw InputError("--wait-s: " + std::to_string(o->wait_s) + " (a positive number of seconds)");
    if (cmd->count("--jobs") && o->jobs == 0) throw InputError("-j: at least 1"); // as whatif says it
    const auto base = scen::load_scenario(o->scenario);
    // Dimensions: key and its values.
    std::vector<std::pair<std::string, std::vector<std::string>>> dims;
    for (const auto& v : o->vary) {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw InputError("--vary " + v + ": expected KEY=V1,V2,...");
      const std::string key = v.substr(0, eq);
      if (key == "seed")
        throw InputError("--vary " + v + ": seeds are a dimension of their own: use --seeds N (seeds 1..N)");
      for (const auto& d : dims)
        if (d.first == key)
          throw InputError("--vary " + key + ": the key is varied twice; give its values once");
      std::vector<std::string> vals;
      std::stringstream ss(v.substr(eq + 1));
      for (std::string x; std::getline(ss, x, ',');)
        if (!x.empty()) vals.push_back(x);
      refuse_listed_twice(vals, "--vary " + key);
      dims.emplace_back(key, vals);
    }
    // The point list is made before anything runs: bounded first (--seeds 4000000000 filled the memory).
    constexpr double kMaxPoints = 100000;
    double count = o->seeds;
    for (const auto& d : dims) count *= static_cast<double>(d.second.size());
    if (count > kMaxPoints)
      throw InputError("sweep: " + std::to_string(static_cast<unsigned long long>(count)) +
                       " points (the --vary values' product x --seeds " + std::to_string(o->seeds) +
                       "), above the limit of 100,000; split the study");
    std::vector<analysis::StudyPoint> points{{"", {}}};
    for (const auto& [key, vals] : dims) {
      std::vector<analysis::StudyPoint> next;
      for (const auto& p : points)
        for (const auto& val : vals) {
          auto q = p;
          q.id += (q.id.empty() ? "" : "-") + sanitize(key) + "=" + sanitize(val);
          q.overrides.push_back(key + "=" + val);
          next.push_back(q);
        }
      points = next;
    }
    {
      std::vector<analysis::StudyPoint> next;
      for (const auto& p : points)
        for (unsigned s = 1; s <= o->seeds; ++s) {
          auto q = p;
          q.id += "-seed=" + std::to_string(s);
          q.overrides.push_back("seed=" + std::to_string(s));
          next.push_back(q);
        }
      points = next;
    }
    // Validate every point before running any (a bad value fails fast, naming the override): its keys, and
    // that its jobs fit its fabric as the run would place them (a job of more nodes than the fabric has
    // used to fail only when its point ran); analysis::check_points.
    // Two points whose effective scenarios are equal (`--vary ...oversubscription=1:1,2:2`, `sizes=1M,1024K`)
    // would run the same thing twice under two names: refused, naming both.
    for (const auto& w : analysis::check_points(
             base, points,
             [](const std::string&first, const std::string&id) {
               return "--vary gives points " + first + " and " + id +
                      " the same scenario (two spellings of one value); give each value once";
             },
             [](const analysis::StudyPoint&p, std::string m) {
               // The scenario layer names overrides as --set; here they came from --vary (or --seeds).
               if (m.rfind("--set ", 0) == 0) m = "--vary " + m.substr(6);
               if (m.rfind("--set:", 0) == 0) m = "--vary" + m.substr(5);
               return m.rfind("--vary ", 0) == 0 ? m : "point " + p.id + ": " + m;
             }))
      std::cerr << "warning: " << w << "\n";
    const int rank = env_int("OMPI_COMM_WORLD_RANK", 0), ranks = std::max(1, env_int("OMPI_COMM_WORLD_SIZE", 1));
    analysis::PointsOptions po;
    po.out_dir = o->out;
    po.rank = rank;
    po.ranks = ranks;
    po.threads =
        o->jobs ? o->jobs : std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(ranks));
    if (!o->quiet)
      po.progress = [rank](const std::string& line) { std::cerr << "  [rank " << rank << "] " << line << "\n"; };
    std::cerr << "ibnetsim sweep: " << points.size() << " points, rank " << rank << " of " << ranks << "\n";
    const auto marks = o->out + "/ranks";
    // Marks carry the MPI job's id, so rank 0 never mistakes a mark left by an earlier (interrupted) sweep.
    const char* job_env = std::getenv("PMIX_NAMESPACE");
    const std::string token = std::string(job_env ? job_env : "local") + "\n";
    auto mark_is = [&](int r, const char* what) {
      const auto path = marks + "/" + std::to_string(r) + what;
      if (!std::filesystem::exists(path)) return false;
      try {
        return read_file(path) == token;
      } catch (const InputError&) {
        return false;
      }
    };
    try {
      analysis::run_points(base, points, po);
    } catch (...) {
      write_file_atomic(marks + "/" + std::to_string(rank) + ".failed", token);
      throw;
    }
    write_file_atomic(marks + "/" + std::to_string(rank) + ".done", token);
    if (rank != 0) return;
    // Rank 0: wait for every other rank, then summarise.
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 1; r < ranks; ++r) {
      for (;;) {
        if (mark_is(r, ".done")) break;
        if (mark_is(r, ".failed"))
          throw InputError("sweep: rank " + std::to_string(r) + " failed (see its error output)");
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > o->wait_s)
          throw InputError("sweep: rank " + std::to_string(r) + " did not finish within --wait-s");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    const auto results = analysis::collect_points(points, o->out);
    nlohmann::json rows = nlohmann::json::array();
    std::ostringstream csv;
    csv << "point";
    for (const auto& d : dims) csv << "," << d.first;
    csv << ",seed,job,op,size_bytes,ranks,iterations,p50_us,p99_us,p999_us,max_us,mean_us,busbw_p50_gbps\n";
    for (std::size_t i = 0; i < points.size(); ++i) {
      const auto& r = results[i];
      for (const auto& c : r.collectives) {
        if (!c.measured()) continue;
        nlohmann::json row = {{"point", points[i].id},
                              {"overrides", points[i].overrides},
                              {"seed", r.manifest.seed},
                              {"job", c.job},
                              {"op", c.op},
                              {"size_bytes", c.size_bytes},
                              {"ranks", c.ranks},
                              {"iterations", c.iterations()},
                              {"completion_us", analysis::completion_json(c)},
                              {"busbw_gbps", analysis::bandwidth_json(c.busbw_gbps)}};
        rows.push_back(row);
        const auto& p = *c.completion_us;
        csv << points[i].id;
        for (std::size_t k = 0; k < dims.size(); ++k) {
          const auto& ov = points[i].overrides[k];
          csv << ",\"" << ov.substr(ov.find('=') + 1) << "\"";
        }
        char line[512];
        std::snprintf(line, sizeof line, ",%llu,%s,%s,%llu,%u,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
                      static_cast<unsigned long long>(r.manifest.seed), c.job.c_str(), c.op.c_str(),
                      static_cast<unsigned long long>(c.size_bytes), c.ranks, c.iterations(), p.p50, p.p99, p.p999,
                      p.max, p.mean, c.busbw_gbps.p50);
        csv << line;
      }
    }
    nlohmann::json dimj = nlohmann::json::object();
    for (const auto& [k, v] : dims) dimj[k] = v;
    nlohmann::json summary = {{"manifest",
                               {{"scenario", base.name},
                                {"source", base.file},
                                {"config", base.effective},
                                {"dimensions", dimj},
                                {"seeds", o->seeds},
                                {"mpi_ranks", ranks},
                                {"points", points.size()}}},
                              {"rows", rows}};
    nlohmann::json ids = nlohmann::json::array(); // the study's points (report leaves other folders out)
    for (const auto& p : points) ids.push_back(p.id);
    summary["manifest"]["point_ids"] = ids;
    if (const auto notes = analysis::unmeasured_notes(points, results); !notes.empty()) {
      summary["manifest"]["warnings"] = notes;
      for (const auto& n : notes) std::cerr << "warning: " << n << "\n";
    }
    write_file_atomic(o->out + "/summary.json", summary.dump(2) + "\n");
    write_file_atomic(o->out + "/summary.csv", csv.str());
    std::cerr << "wrote " << o->out << "/summary.json and summary.csv (" << points.size() << " points)\n";
  });
}

} // namespace ibn::app
