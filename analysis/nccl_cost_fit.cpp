#include "analysis/nccl_cost_fit.hpp"

#include "analysis/validate.hpp"
#include "calibration/fit.hpp"
#include "scenarios/nccl_cost.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"

#include <map>
#include <utility>

namespace ibn::analysis {

calib::NcclCostFit fit_nccl_cost_section(const std::vector<std::string>& logs, const NcclFitOptions& opt,
                                         std::vector<std::string>& warnings) {
  struct Row {
    calib::NcclCostPoint point;
    std::string protocol;
    double base_prior = 0;
  };
  // A release the user names (--set nccl.version=...) replaces the one a log prints (as validate's --set
  // does).
  std::string set_version;
  for (const auto& s : opt.sets)
    if (s.rfind("nccl.version=", 0) == 0) set_version = s.substr(13);
  std::vector<Row> rows;
  std::string version;
  calib::NcclCostFit out;
  for (const auto& log : logs) {
    ValidateOptions v;
    v.engine = opt.engine;
    v.fabric = opt.fabric;
    v.nics_per_node = opt.nics_per_node;
    v.iters = 2;
    v.warmup = 1;
    v.max_bytes = opt.max_bytes;
    // The residual is what the engine leaves out: simulate without NCCL's costs (nccl.costs is on by
    // default), or the fit would see the table's costs already charged and fit them again as ~0.
    v.sets = opt.sets;
    v.sets.push_back("nccl.costs=false");
    nlohmann::json j;
    try {
      j = validate_nccl_tests(log, v);
    } catch (const InputError& e) {
      // validate's option names, as calibrate fit spells them.
      std::string m = e.what();
      for (const auto& [from, to] : {std::pair<std::string, std::string>{"--set ", "--nccl-set "},
                                     {"--max-bytes ", "--nccl-max-bytes "}})
        for (std::size_t at = m.find(from); at != std::string::npos; at = m.find(from, at + to.size()))
          m.replace(at, from.size(), to);
      throw InputError(m);
    }
    // A single-node run has no network step: its rows would enter the fit with net_steps = 0 and, beside
    // multi-node rows, set the base alone from what the intra-node model misses (docs/calibration.md
    // "NCCL costs"). Refused, naming the run.
    for (const auto& r : j.at("runs"))
      if (r.value("nodes", 0u) == 1) {
        const std::string where = log + ":" + std::to_string(r.value("line", std::size_t{0})) + ": " +
                                  r.value("test", std::string("the test"));
        const std::string gpus = std::to_string(r.value("gpus_per_node", 0u)) + " GPUs";
        const std::string why =
            ": it has no network step, so it cannot take part in the fit of NCCL's network "
            "costs (its rows would set the base from the intra-node model's errors); ";
        if (!r.value("nodes_from_log", true)) // no rank lines, no nNodes: read as one node
          throw InputError(where +
                           " does not say how many nodes ran (no '# Rank' lines, no NCCL INFO nNodes), "
                           "so it reads as one node of " +
                           gpus + why + "add the launcher's '# Rank' lines to the log, or leave it out");
        throw InputError(where + " ran on a single node (" + gpus + ")" + why +
                         "give only multi-node logs (fit the intra-node model from this one with `calibrate "
                         "nvlink " +
                         log + "`)");
      }
    // What the reader noticed in the log (a cut table, a missing summary): the user's, not dropped.
    for (const auto& n : j.at("notes")) warnings.push_back(n.get<std::string>());
    std::string log_version;
    for (const auto& r : j.at("runs"))
      if (log_version.empty()) log_version = r.value("nccl_version", std::string());
    if (!set_version.empty()) log_version = set_version; // the user's release wins, as in validate's --set
    if (!log_version.empty() && version.empty()) version = log_version;
    if (!log_version.empty() && log_version != version)
      warnings.push_back(log + ": NCCL " + log_version + " while an earlier log has " + version +
                         "; the fit mixes them under " + version);
    const auto& table = scen::nccl_cost_table(log_version, log);
    std::size_t used = 0;
    for (const auto& r : j.at("rows")) {
      const auto& test = r.at("test").get<std::string>();
      const auto op = scen::parse_coll_op(test.substr(0, test.size() - 5), log);
      const std::string algo = r.at("algorithm"), proto = r.at("protocol");
      const std::uint32_t gpn = r.at("gpus_per_node"), nodes = r.at("nodes");
      const auto counts = scen::nccl_step_counts(table, op, algo, gpn * nodes, nodes);
      scen::NcclCostInputs ci;
      ci.algorithm = algo;
      ci.protocol = proto;
      ci.ranks = gpn * nodes;
      ci.nodes = nodes;
      const auto costs = scen::nccl_step_costs(table, ci);
      Row row;
      row.point.net_steps = counts.net;
      row.point.size_bytes = r.at("size_bytes").get<double>();
      row.point.residual_us = r.at("measured_time_us").get<double>() -
                              r.at("simulated_time_us").get<double>() - counts.intra * costs.intra_us;
      row.protocol = proto;
      row.base_prior = costs.base_us;
      rows.push_back(row);
      ++used;
    }
    out.sources.push_back(log + " (" + std::to_string(used) + " rows <= " + format_size(opt.max_bytes) + ")");
  }
  // The protocol most rows ran in (small sizes: LL as a rule); the fit covers that protocol only.
  std::map<std::string, std::size_t> per_proto;
  for (const auto& r : rows) ++per_proto[r.protocol];
  std::string proto;
  std::size_t best = 0;
  for (const auto& [p, n] : per_proto)
    if (n > best) proto = p, best = n;
  std::vector<calib::NcclCostPoint> pts;
  double prior = 0;
  for (const auto& r : rows)
    if (r.protocol == proto) {
      if (pts.empty()) prior = r.base_prior;
      pts.push_back(r.point);
    }
  if (pts.size() < rows.size())
    warnings.push_back("NCCL cost fit: " + std::to_string(rows.size() - pts.size()) +
                       " row(s) in another protocol than " + proto + " left out");
  const auto e = calib::fit_nccl_costs(pts, prior);
  if (e.net_step_us == 0 && e.points > 0)
    warnings.push_back(
        "NCCL cost fit: the net step came out negative and is held at 0 (the simulation without "
        "NCCL's costs is already as slow as the measurement at these sizes: check the fabric and "
        "NICs given for the simulations)");
  if (e.r2 < 0.5)
    warnings.push_back("NCCL cost fit: R^2 " + std::to_string(e.r2).substr(0, 6) +
                       ": base + steps x net step explains little of the measured rows");
  if (e.slow_rows)
    warnings.push_back("NCCL cost fit: " + std::to_string(e.slow_rows) +
                       " row(s) more than 6 robust sds slower than the fit left out as slow iterations");
  out.version = version;
  out.protocol = proto;
  out.base = {e.base_us, "us", e.r2, e.max_residual_us, "us", e.points};
  out.net_step = {e.net_step_us, "us", e.r2, e.max_residual_us, "us", e.points};
  out.base_fixed = e.base_fixed;
  out.max_bytes = opt.max_bytes;
  return out;
}

} // namespace ibn::analysis
