#include "analysis/nccl_tests.hpp"

#include "analysis/results.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/error.hpp"
#include "sim/version.hpp"

#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace ibn::analysis {

namespace {

struct TestInfo {
  const char* test;
  const char* op;
  const char* redop;
  bool per_rank_parts; ///< size must split into ranks x elements
  int root = -1;       ///< the root column nccl-tests prints (0 for rooted collectives, -1 otherwise)
  /// nccl-tests rounds each rank's part down to a multiple of this many elements (its ALIGN 4 for AllGather
  /// and ReduceScatter: 32 B on 8 ranks gives count 0, as the Snellius all_gather log of tests/data prints).
  std::uint64_t align = 1;
};
constexpr TestInfo kTests[] = {
    {"all_reduce_perf", "allreduce", "sum", false},
    {"all_gather_perf", "allgather", "none", true, -1, 4},
    {"reduce_scatter_perf", "reducescatter", "sum", true, -1, 4},
    {"alltoall_perf", "alltoall", "none", true},
    {"sendrecv_perf", "sendrecv", "sum", false}, // nccl-tests prints its (unused) default op
    {"broadcast_perf", "broadcast", "none", false, 0},
    {"reduce_perf", "reduce", "sum", false, 0},
};

const TestInfo& info_of(const std::string& test) {
  for (const auto& t : kTests)
    if (test == t.test) return t;
  throw InputError(
      "unknown nccl-tests binary '" + test +
      "' (expected all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf, "
      "broadcast_perf or reduce_perf)");
}

/// The sizes nccl-tests measures from -b to -e by -f, each rounded down to what the test can split (whole
/// elements per rank, aligned): sizes that round to 0 are left out and counted in `zero_rows` (nccl-tests
/// prints them as "0 0" rows), and a size equal to the one before is left out.
std::vector<std::uint64_t> sizes_of(const NcclTestsOptions& o, std::uint32_t ranks,
                                    std::uint32_t* zero_rows) {
  if (o.min_bytes == 0 || o.max_bytes < o.min_bytes)
    throw InputError("-b/-e: need 0 < minBytes <= maxBytes (got " + std::to_string(o.min_bytes) + " and " +
                     std::to_string(o.max_bytes) + ")");
  if (o.factor < 2) throw InputError("-f: the step factor must be at least 2");
  const auto& ti = info_of(o.test);
  const std::uint64_t unit = 4 * (ti.per_rank_parts ? ranks * ti.align : 1);
  std::vector<std::uint64_t> out;
  if (zero_rows) *zero_rows = 0;
  for (std::uint64_t s = o.min_bytes; s <= o.max_bytes; s *= o.factor) {
    const auto rounded = s / unit * unit;
    if (rounded == 0 && zero_rows) ++*zero_rows;
    if (rounded > 0 && (out.empty() || out.back() != rounded)) out.push_back(rounded);
    if (s > o.max_bytes / o.factor) break;
  }
  if (out.empty())
    throw InputError("-b/-e: no size from " + std::to_string(o.min_bytes) + " to " +
                     std::to_string(o.max_bytes) + " B holds a whole part per rank (" + o.test + " on " +
                     std::to_string(ranks) + " ranks needs at least " + std::to_string(unit) + " B)");
  return out;
}

} // namespace

std::string nccl_test_op(const std::string& test) { return info_of(test).op; }

nlohmann::json nccl_tests_scenario(const NcclTestsOptions& o) {
  const auto& ti = info_of(o.test);
  if (o.nodes == 0 || o.gpus_per_node == 0) throw InputError("--nodes and -g must be at least 1");
  if (o.iters == 0) throw InputError("-n: at least one iteration");
  // Out-of-place and in-place each run -n iterations: 2 x -n in the scenario, whose key allows 1e9.
  if (o.iters > 500000000u) throw InputError("-n: " + std::to_string(o.iters) + " (at most 500,000,000)");
  if (static_cast<std::uint64_t>(o.nodes) * o.gpus_per_node < 2)
    throw InputError(
        "--nodes x -g: one rank; a collective needs at least two (nccl-tests prints no bandwidth "
        "for one rank)");
  const std::uint32_t nics = o.nics_per_node ? o.nics_per_node : o.gpus_per_node;
  const std::uint32_t ranks = o.nodes * o.gpus_per_node;
  nlohmann::json sizes = nlohmann::json::array();
  for (const auto s : sizes_of(o, ranks, nullptr)) sizes.push_back(s);
  nlohmann::json doc = {{"name", std::string("nccl-tests ") + o.test},
                        {"seed", o.seed},
                        {"engine", o.engine},
                        {"jobs", nlohmann::json::array({{{"name", o.test},
                                                          {"nodes", o.nodes},
                                                          {"gpus_per_node", o.gpus_per_node},
                                                          {"nics_per_node", nics},
                                                          {"placement", "linear"},
                                                          {"workload",
                                                           {{"op", ti.op},
                                                            {"sizes", sizes},
                                                            {"algorithm", o.algorithm},
                                                            {"protocol", o.protocol},
                                                            {"channels", o.channels},
                                                            {"iterations", 2 * o.iters},
                                                            {"warmup", o.warmup}}}}})}};
  if (!o.fabric.empty()) {
    doc["fabric"] = {{"file", o.fabric}};
  } else {
    // A non-blocking NDR 2-tier fat-tree with room for every node's NICs.
    doc["fabric"] = {{"generator", "fat-tree"},
                     {"params", {{"tiers", 2}, {"radix", 64}, {"hosts", std::max<std::uint32_t>(2, o.nodes * nics)},
                                 {"oversubscription", "1:1"}, {"rate", "NDR"}}}};
  }
  if (!o.profile.empty()) doc["calibration"] = o.profile;
  return doc;
}

NcclTestsResult run_nccl_tests(const NcclTestsOptions& o, std::function<void(const std::string&)> progress) {
  const auto doc = nccl_tests_scenario(o);
  if (!o.fabric.empty())
    for (const auto& kv : o.sets)
      if (kv.rfind("fabric.", 0) == 0)
        throw InputError("--set " + kv + ": the fabric is --fabric " + o.fabric +
                         " as the file describes it (fabric.* keys shape the default fabric only)");
  const auto s = scen::make_scenario(doc, "nccl-tests", "", o.sets);
  scen::RunOptions ro;
  ro.progress = std::move(progress);
  const auto r = [&] {
    try {
      return scen::run_scenario(s, ro);
    } catch (const InputError& e) {
      // The job is the command's: a placement that does not fit names the options, not a scenario key.
      const std::string m = e.what();
      const auto at = m.find("job '" + o.test + "': asks for");
      if (at == std::string::npos) throw;
      throw InputError("--nodes " + std::to_string(o.nodes) + " (" +
                       (o.fabric.empty() ? std::string("default fabric") : "--fabric " + o.fabric) +
                       "): " + m.substr(at));
    }
  }();
  NcclTestsResult out;
  out.ranks = o.nodes * o.gpus_per_node;
  (void)sizes_of(o, out.ranks, &out.zero_rows);
  out.results = results_json(r);
  for (const auto& w : r.warnings) out.warnings.push_back(w);
  const auto& ti = info_of(o.test);
  for (const auto& c : r.collectives) {
    NcclTestsRow row;
    row.size_bytes = c.size_bytes;
    // nccl-tests' count is the per-rank element count of what it passes to NCCL: for AllGather, ReduceScatter
    // and AllToAll the size over ranks (33554432 B on 8 ranks of doubles: 524288).
    row.count = c.size_bytes / 4 / (ti.per_rank_parts ? out.ranks : 1);
    row.redop = ti.redop;
    row.root = ti.root;
    row.algorithm = c.algorithm;
    row.protocol = c.protocol;
    row.launch_us = c.launch_us;
    // The first -n samples are the out-of-place column, the next -n the in-place one; a run that stopped
    // early (a QP out of retries, run.max_sim_time_ms) leaves a column short or empty.
    const std::size_t got = c.samples_us.size();
    const auto oop_n = std::min<std::size_t>(got, o.iters);
    row.oop_n = static_cast<std::uint32_t>(oop_n);
    row.ip_n = static_cast<std::uint32_t>(got - oop_n);
    auto mean = [](auto b, auto e) {
      const auto n = std::distance(b, e);
      return n == 0 ? std::nan("") : std::accumulate(b, e, 0.0) / static_cast<double>(n);
    };
    row.oop_time_us = mean(c.samples_us.begin(), c.samples_us.begin() + static_cast<std::ptrdiff_t>(oop_n));
    row.ip_time_us = mean(c.samples_us.begin() + static_cast<std::ptrdiff_t>(oop_n), c.samples_us.end());
    auto bw = [&](double t) { return static_cast<double>(c.size_bytes) / (t * 1e3); }; // GB/s
    row.oop_algbw = bw(row.oop_time_us);
    row.oop_busbw = row.oop_algbw * c.busbw_factor;
    row.ip_algbw = bw(row.ip_time_us);
    row.ip_busbw = row.ip_algbw * c.busbw_factor;
    if (row.oop_n < o.iters || row.ip_n < o.iters)
      out.warnings.push_back("size " + std::to_string(c.size_bytes) + " B: " + std::to_string(row.oop_n) +
                             " out-of-place and " + std::to_string(row.ip_n) + " in-place of " +
                             std::to_string(o.iters) +
                             " iterations completed (the run stopped early; see the warning above); its "
                             "columns average what completed, 'n/a' where nothing did, and the average bus "
                             "bandwidth leaves those columns out");
    out.rows.push_back(row);
  }
  return out;
}

std::string format_nccl_tests(const NcclTestsOptions& o, const NcclTestsResult& r) {
  std::ostringstream s;
  char line[512];
  s << "# nccl-tests layout, simulated by ibnetsim " << kVersion << " (" << o.engine << " engine)\n";
  s << "# Collective test starting: " << o.test << "\n";
  std::snprintf(line, sizeof line,
                "# nThread 1 nGpus %u minBytes %llu maxBytes %llu step: %llu(factor) warmup iters: %u iters: %u agg "
                "iters: 1 validation: 0 graph: 0\n",
                o.gpus_per_node, static_cast<unsigned long long>(o.min_bytes),
                static_cast<unsigned long long>(o.max_bytes), static_cast<unsigned long long>(o.factor), o.warmup,
                o.iters);
  s << line << "#\n# Using devices\n";
  const auto& placement = r.results.at("placement").at(0);
  for (std::uint32_t rank = 0; rank < r.ranks; ++rank) {
    const auto node = rank / o.gpus_per_node;
    std::snprintf(line, sizeof line, "#  Rank %2u Group  0 Pid %7u on %10s device %2u [simulated] GPU\n", rank,
                  1000 + node, ("node" + std::to_string(placement.at("nodes").at(node).get<int>())).c_str(),
                  rank % o.gpus_per_node);
    s << line;
  }
  s << "#\n";
  s << "#                                                              out-of-place                       in-place   "
       "       \n";
  s << "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  "
       "#wrong \n";
  s << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)  "
       "       \n";
  // nccl-tests' adaptive time column: 2 decimals below 100 us, 1 below 10,000 us, none above ("27.73",
  // "1150.9", "12234" in the real logs of tests/data/nccl-tests).
  // Widths as nccl-tests prints them: the time in 7 characters, so each value ends under its header.
  auto t = [](double us) {
    char b[32];
    if (std::isnan(us)) return std::string("    n/a");
    std::snprintf(b, sizeof b, us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
    return std::string(b);
  };
  auto g = [](double gbs) {
    char b[32];
    if (std::isnan(gbs)) return std::string("   n/a");
    std::snprintf(b, sizeof b, "%6.2f", gbs);
    return std::string(b);
  };
  double bus_sum = 0;
  // Sizes below one aligned element per rank: nccl-tests calls NCCL with count 0, which returns at once; it
  // prints the call's host time (0.09-0.13 us in the Snellius log), which is not simulated: 0.00 here.
  const auto& ti = info_of(o.test);
  for (std::uint32_t k = 0; k < r.zero_rows; ++k) {
    std::snprintf(line, sizeof line,
                  "%12d  %12d  %8s  %6s  %6d  %s  %6.2f  %6.2f  %6s  %s  %6.2f  %6.2f  %6s\n", 0, 0, "float",
                  ti.redop, ti.root, t(0).c_str(), 0.0, 0.0, "N/A", t(0).c_str(), 0.0, 0.0, "N/A");
    s << line;
  }
  std::size_t columns = 2 * static_cast<std::size_t>(r.zero_rows);
  for (const auto& row : r.rows) {
    std::snprintf(line, sizeof line, "%12llu  %12llu  %8s  %6s  %6d  %s  %s  %s  %6s  %s  %s  %s  %6s\n",
                  static_cast<unsigned long long>(row.size_bytes), static_cast<unsigned long long>(row.count),
                  row.type.c_str(), row.redop.c_str(), row.root, t(row.oop_time_us).c_str(),
                  g(row.oop_algbw).c_str(), g(row.oop_busbw).c_str(), "N/A", t(row.ip_time_us).c_str(),
                  g(row.ip_algbw).c_str(), g(row.ip_busbw).c_str(), "N/A");
    s << line;
    // A column with no completed iteration (the run stopped early) is left out of the average.
    for (const double b : {row.oop_busbw, row.ip_busbw})
      if (!std::isnan(b)) bus_sum += b, ++columns;
  }
  s << "# Out of bounds values : 0 OK\n";
  std::snprintf(line, sizeof line, "# Avg bus bandwidth    : %g \n",
                columns == 0 ? 0.0 : bus_sum / static_cast<double>(columns));
  s << line << "#\n# Collective test concluded: " << o.test << "\n#\n";
  return s.str();
}

void refuse_job_keys_in_sets(const std::vector<std::string>& sets, const std::string& flag,
                             const std::string& where, bool seed_flag) {
  struct Key {
    const char* key;
    const char* instead;
  };
  static constexpr Key kKeys[] = {{"jobs[0].workload.op", nullptr},
                                  {"jobs[0].workload.sizes", nullptr},
                                  {"jobs[0].workload.iterations", nullptr},
                                  {"jobs[0].nodes", nullptr},
                                  {"jobs[0].gpus_per_node", nullptr},
                                  {"jobs[0].nics_per_node", "--nics"},
                                  {"jobs", nullptr},
                                  {"fabric.file", "--fabric"},
                                  {"engine", "--engine"},
                                  {"seed", "--seed"}};
  for (const auto& kv : sets)
    for (const auto& k : kKeys) {
      const std::string key = k.key;
      if (key == "seed" && !seed_flag) continue;
      const bool hit =
          kv.rfind(key + "=", 0) == 0 || kv.rfind(key + ".", 0) == 0 || kv.rfind(key + "[", 0) == 0;
      if (!hit) continue;
      std::string instead = k.instead ? k.instead : where;
      if (flag == "--nccl-set" && key == "jobs[0].nics_per_node") instead = "--nccl-nics"; // calibrate fit's
      if (flag == "--nccl-set" && key == "fabric.file") instead = "--nccl-fabric";         // own options
      if (flag == "--nccl-set" && key == "engine") instead = "--nccl-engine";
      throw InputError(flag + " " + kv + ": '" + key + "' is set by " + instead + ", not by " + flag);
    }
}

} // namespace ibn::analysis
