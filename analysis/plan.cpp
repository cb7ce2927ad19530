#include "analysis/plan.hpp"
#include "analysis/tail_stats.hpp"

#include "analysis/points.hpp"
#include "analysis/results.hpp"
#include "models/packet/config.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"
#include "sim/version.hpp"
#include "topology/rail_optimized.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

namespace ibn::analysis {
namespace {

std::string ratio_id(const topo::Ratio& r) {
  return std::to_string(r.down) + "to" + std::to_string(r.up);
}

nlohmann::json default_workload(std::int64_t nodes, const PlanOptions& opt, int nics) {
  using J = nlohmann::json;
  const std::int64_t ar_nodes = std::max<std::int64_t>(2, nodes / 2);
  const std::int64_t ag_nodes = std::max<std::int64_t>(nodes >= 8 ? 2 : 0, nodes / 8);
  const std::int64_t nb_nodes = std::max<std::int64_t>(0, nodes - ar_nodes - ag_nodes);
  auto job = [&](const std::string& name, std::int64_t n, const std::string& op, const std::string& placement,
                 J sizes, bool loop) {
    // AllReduce: hierarchical (NVLink inside the node, one ring per rail between nodes), as NCCL runs on
    // rail-optimized systems; AllGather: ring. Two channels each, as the built-in what-if study.
    J w = {{"op", op},
           {"sizes", sizes},
           {"algorithm", op == "allreduce" ? "hierarchical" : "ring"},
           {"channels", 2},
           {"compute_gap_us", 20.0},
           {"jitter", {{"distribution", "lognormal"}, {"scale_us", 2.0}}}};
    if (loop)
      w["loop"] = true;
    else {
      w["iterations"] = opt.iterations;
      w["warmup"] = 1;
    }
    return J{{"name", name},
             {"nodes", n},
             {"gpus_per_node", opt.gpus_per_node},
             {"nics_per_node", nics},
             {"placement", placement},
             {"workload", w}};
  };
  J jobs = J::array();
  jobs.push_back(job("allreduce", ar_nodes, "allreduce", "spread", opt.sizes, false));
  if (ag_nodes > 0) jobs.push_back(job("allgather", ag_nodes, "allgather", "spread", opt.sizes, false));
  if (nb_nodes > 0) jobs.push_back(job("neighbour", nb_nodes, "allreduce", "random", J::array({"8M"}), true));
  return J{{"name", "plan"}, {"seed", 1}, {"jobs", jobs}};
}

double percentile_sorted(const std::vector<double>& s, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(s.size())));
  return s[std::min(s.size(), std::max<std::size_t>(1, rank)) - 1];
}

std::string money(double usd) {
  std::ostringstream o;
  o << "$" << std::fixed << std::setprecision(2) << usd / 1e6 << "M";
  return o.str();
}

} // namespace

std::vector<PlanDesign> plan_designs(const PlanOptions& opt, const topo::Catalog& catalog,
                                     std::vector<std::string>* notes) {
  if (opt.gpus < 1) throw InputError("--gpus must be at least 1");
  if (opt.gpus_per_node < 1) throw InputError("--gpus-per-node must be at least 1");
  if (opt.gpus % opt.gpus_per_node != 0)
    throw InputError("--gpus " + std::to_string(opt.gpus) + " is not a multiple of --gpus-per-node " +
                     std::to_string(opt.gpus_per_node));
  const int nics = opt.nics_per_node ? opt.nics_per_node : opt.gpus_per_node;
  if (nics < 1 || nics > 64) throw InputError("--nics-per-node must be 1..64");
  const std::int64_t nodes = opt.gpus / opt.gpus_per_node;
  const auto speed = topo::parse_link_speed(opt.nic_rate, "--nic");
  if (opt.ratios.empty()) throw InputError("--ratios: give at least one ratio");
  std::vector<PlanDesign> out;
  for (const auto& model : opt.switches) {
    const topo::Part* sw = catalog.find(catalog.switches, model);
    if (!sw) {
      std::string list;
      for (const auto& s : catalog.switches) list += (list.empty() ? "" : ", ") + s.model;
      throw InputError("--switch: '" + model + "' is not in the catalog " + catalog.file +
                       " (known: " + list + ")");
    }
    if (std::abs(sw->rate_gbps() - speed.rate_gbps()) > 1e-6)
      throw InputError("--switch " + model + " runs " + sw->rate + " ports but --nic is " + opt.nic_rate +
                       "; pick a switch of the NIC's rate");
    for (const auto& r : opt.ratios) {
      const std::vector<int> tiers = opt.tiers.empty() ? std::vector<int>{0} : opt.tiers;
      for (const int t : tiers) {
        std::vector<PlanDesign> cands;
        int partial = 0, refused = 0;
        std::string refusal; // the generator's reason for the first exact split it refused (capacity, ...)
        for (int su = 1; su <= sw->ports; ++su) {
          if (static_cast<std::int64_t>(su) * r.up % r.down != 0) continue;
          if (su + su * r.up / r.down > sw->ports) continue;
          if (nodes % su != 0) {
            ++partial;
            continue;
          }
          topo::RailOptimizedParams p;
          p.nodes = nodes;
          p.nics_per_node = nics;
          p.su_nodes = su;
          p.radix = sw->ports;
          if (t) p.tiers = t;
          p.oversubscription = {r};
          p.speed = speed;
          topo::Fabric f;
          try {
            f = topo::build_rail_optimized(p);
          } catch (const InputError& e) {
            if (refused++ == 0) refusal = e.what();
            continue;
          }
          PlanDesign d;
          d.switch_model = sw->model;
          d.ratio = r.to_string();
          d.tiers = f.origin.at("tiers");
          d.su_nodes = su;
          d.leaf_ports = f.origin.at("leaf_ports");
          d.nodes = nodes;
          d.hcas = static_cast<std::int64_t>(f.hcas().size());
          p.tiers = d.tiers;
          d.bisection_gbps = topo::rail_optimized_bisection_gbps(p);
          d.fabric_params = {{"nodes", nodes},      {"nics-per-node", nics},
                             {"su-nodes", su},      {"radix", sw->ports},
                             {"tiers", d.tiers},    {"oversubscription", r.to_string()},
                             {"rate", opt.nic_rate}};
          d.bom = topo::bill_of_materials(f, catalog, {sw->model, ""});
          cands.push_back(std::move(d));
        }
        if (cands.empty()) {
          if (notes) {
            std::string why = std::to_string(partial) + " splits would leave a scalable unit partly filled";
            if (refused > 0)
              why += "; " + std::to_string(refused) + " exact split(s) refused by the generator, e.g. " +
                     refusal;
            notes->push_back(r.to_string() + " on " + model +
                             (t ? " (" + std::to_string(t) + " tiers)" : "") + ": no exact design (" + why +
                             ")");
          }
          continue;
        }
        std::stable_sort(cands.begin(), cands.end(), [](const PlanDesign& a, const PlanDesign& b) {
          if (a.bom.cost_usd != b.bom.cost_usd) return a.bom.cost_usd < b.bom.cost_usd;
          return a.su_nodes > b.su_nodes;
        });
        PlanDesign d = std::move(cands.front());
        d.alternatives = static_cast<int>(cands.size()) - 1;
        d.name = d.switch_model + "-" + ratio_id(r) + "-" + std::to_string(d.tiers) + "tier";
        const std::string want =
            opt.engine == "auto" ? (static_cast<std::size_t>(d.hcas) <= kPacketMaxHcas ? "packet" : "flow")
                                 : opt.engine;
        if (want != "packet" && want != "flow") throw InputError("--engine must be auto, packet or flow");
        d.engine = want;
        out.push_back(std::move(d));
      }
    }
  }
  if (out.empty()) { // the notes say why: they go into the message (nothing else prints them on this path)
    std::string why;
    if (notes)
      for (const auto& n : *notes) why += (why.empty() ? ": " : "; ") + n;
    throw InputError("no valid design for these switches and ratios" + why);
  }
  if (opt.cc.empty()) return out;
  // Congestion control as a plan dimension: every design once per setting, named with it when there are
  // several. CC lives in the packet engine; a flow design would silently run without it, so it is refused.
  for (std::size_t i = 0; i < opt.cc.size(); ++i) {
    (void)pkt::parse_cc_mode(opt.cc[i], "--cc");
    for (std::size_t j = 0; j < i; ++j)
      if (opt.cc[j] == opt.cc[i]) throw InputError("--cc: '" + opt.cc[i] + "' is listed twice");
  }
  std::vector<PlanDesign> by_cc;
  for (const auto& cc : opt.cc)
    for (PlanDesign d : out) {
      if (cc != "none" && d.engine != "packet")
        throw InputError("--cc " + cc + ": design " + d.name + " (" + std::to_string(d.hcas) +
                         " HCAs) runs on the flow engine, which does not model congestion control; use "
                         "--engine packet, or --cc none for designs of this size");
      d.cc = cc;
      if (opt.cc.size() > 1) d.name += "-" + cc;
      by_cc.push_back(std::move(d));
    }
  return by_cc;
}

nlohmann::json run_plan(const PlanOptions& opt) {
  const auto catalog = topo::Catalog::load(opt.catalog_path);
  std::vector<std::string> notes;
  auto designs = plan_designs(opt, catalog, &notes);
  const int nics = opt.nics_per_node ? opt.nics_per_node : opt.gpus_per_node;

  nlohmann::json base_doc;
  std::string where = "plan", base_dir = ".";
  if (!opt.scenario_file.empty()) {
    const auto s = scen::load_scenario(opt.scenario_file);
    base_doc = s.effective;
    where = s.file;
    base_dir = s.base_dir;
  } else {
    base_doc = default_workload(designs.front().nodes, opt, nics);
  }

  std::vector<nlohmann::json> results(designs.size());
  if (opt.simulate) {
    for (const std::string engine : {"packet", "flow"}) {
      std::vector<StudyPoint> pts;
      std::vector<std::size_t> idx;
      for (std::size_t i = 0; i < designs.size(); ++i)
        if (designs[i].engine == engine) {
          StudyPoint p;
          p.id = designs[i].name;
          p.overrides = {"fabric.generator=rail-optimized",
                         "fabric.params=" + designs[i].fabric_params.dump(), "engine=" + engine};
          if (!designs[i].cc.empty()) p.overrides.push_back("cc.algorithm=" + designs[i].cc);
          if (base_doc.contains("fabric") && !base_doc["fabric"].value("file", std::string()).empty())
            p.overrides.insert(p.overrides.begin(), "fabric.file=");
          pts.push_back(std::move(p));
          idx.push_back(i);
        }
      if (pts.empty()) continue;
      const auto base = scen::make_scenario(base_doc, where, base_dir);
      PointsOptions po;
      po.out_dir = opt.out_dir;
      po.progress = opt.progress;
      po.threads = opt.jobs;
      // Flow points: run_points forks one child per point (SimGrid: one engine per process), `jobs` at a
      // time; the children share the progress board with this process, so the plan shows their progress.
      if (engine == "flow" && opt.external) po.external = opt.external;
      if (opt.progress)
        opt.progress(std::to_string(pts.size()) + " design(s) on the " + engine + " engine, " +
                     std::to_string(po.threads) + " at a time");
      const auto res = run_points(base, pts, po);
      for (std::size_t k = 0; k < idx.size(); ++k)
        if (res[k]) results[idx[k]] = to_json(*res[k]);
    }
  }

  // Reference for deltas: the design with the lowest ratio (non-blocking when 1:1 was asked) per switch, run
  // with the first --cc setting when several are compared.
  auto ratio_of = [](const std::string& r) {
    const auto rs = topo::parse_ratios(r, "ratio");
    return rs.front().value();
  };
  nlohmann::json out_designs = nlohmann::json::array();
  std::map<std::string, std::size_t> ref; // switch -> design index
  for (std::size_t i = 0; i < designs.size(); ++i) {
    if (!opt.cc.empty() && designs[i].cc != opt.cc.front()) continue; // the first CC setting is the reference
    auto it = ref.find(designs[i].switch_model);
    if (it == ref.end() || ratio_of(designs[i].ratio) < ratio_of(designs[it->second].ratio))
      ref[designs[i].switch_model] = i;
  }
  std::vector<std::map<std::string, nlohmann::json>> per(designs.size());
  std::vector<std::string> keys; // in order of first appearance
  for (std::size_t i = 0; i < designs.size(); ++i) {
    if (results[i].is_null()) continue;
    for (const auto& c : results[i].at("collectives")) {
      if (c.value("background", false) || !c.contains("samples_us")) continue;
      auto samples = c.at("samples_us").get<std::vector<double>>();
      if (samples.empty()) continue;
      std::sort(samples.begin(), samples.end());
      const std::string key =
          c.at("op").get<std::string>() + " " + format_size(c.at("size_bytes").get<std::uint64_t>());
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      const auto c50 = quantile_ci(samples, 0.5), c99 = quantile_ci(samples, 0.99);
      auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
      per[i][key] = {{"op", c.at("op")},
                     {"size_bytes", c.at("size_bytes")},
                     {"n", samples.size()},
                     {"p50_us", percentile_sorted(samples, 0.5)},
                     {"p99_us", percentile_sorted(samples, 0.99)},
                     {"ci_p50_us", {num(c50.first), num(c50.second)}},
                     {"ci_p99_us", {num(c99.first), num(c99.second)}}};
    }
  }
  // Headline metric: p99 of the largest AllReduce size (else the last key).
  std::string headline;
  std::uint64_t best_size = 0;
  for (const auto& k : keys)
    for (const auto& m : per)
      if (auto it = m.find(k); it != m.end() && it->second.at("op") == "allreduce" &&
                               it->second.at("size_bytes").get<std::uint64_t>() >= best_size) {
        best_size = it->second.at("size_bytes");
        headline = k;
      }
  if (headline.empty() && !keys.empty()) headline = keys.back();

  // Designs whose run went on the flow engine's ring-fluid model (scenarios/ring_fluid.hpp): named in a note.
  auto ring_fluid = [&](std::size_t i) {
    if (results[i].is_null() || !results[i].contains("engine")) return false;
    const auto& e = results[i].at("engine");
    return (e.contains("counters") && e.at("counters").contains("ring_fluid")) ||
           (e.contains("extra") && e.at("extra").contains("ring_fluid"));
  };
  std::string fluid_names;
  for (std::size_t i = 0; i < designs.size(); ++i)
    if (ring_fluid(i)) fluid_names += (fluid_names.empty() ? "" : ", ") + designs[i].name;
  if (!fluid_names.empty())
    notes.push_back(
        "ran on the flow engine's ring-fluid model (every ring stage one lock-step coflow; the "
        "exact per-transfer path cannot hold these collectives; measured against it at 1,024 GPUs: "
        "p50 within 0.6-26.4 % for ring and hierarchical jobs (the largest at 4:1), up to +101 % for a ring "
        "job beside tree jobs "
        "on "
        "an oversubscribed fabric, docs/flow-engine.md \"Ring fluid\"): " +
        fluid_names);
  // The bill of materials' warnings (parts counted but not priced, ...), once each with the designs they hold
  // for: a cost without them would read as complete.
  {
    std::vector<std::pair<std::string, std::string>> warned; // warning -> design names, in order
    for (const auto& d : designs)
      for (const auto& w : d.bom.warnings) {
        auto it = std::find_if(warned.begin(), warned.end(), [&](const auto& x) { return x.first == w; });
        if (it == warned.end())
          warned.emplace_back(w, d.name);
        else
          it->second += ", " + d.name;
      }
    for (const auto& [w, names] : warned) notes.push_back("bill of materials of " + names + ": " + w);
  }
  // Designs whose workload never crossed a leaf's uplinks (results' links.by_tier "leaf->spine" carried no
  // byte): their leaf ratio was not exercised, so their results cannot differ by it.
  {
    std::string idle_up;
    for (std::size_t i = 0; i < designs.size(); ++i) {
      if (results[i].is_null() || !results[i].contains("links")) continue;
      double up = 0;
      for (const auto& t : results[i].at("links").value("by_tier", nlohmann::json::array()))
        if (t.value("tier", std::string()) == "leaf->spine") up += t.value("bytes", 0.0);
      if (up == 0) idle_up += (idle_up.empty() ? "" : ", ") + designs[i].name;
    }
    if (!idle_up.empty())
      notes.push_back("the workload sent no byte over the leaf uplinks of " + idle_up +
                      " (its traffic stayed on the rail leaves" +
                      (designs.front().nodes <= designs.front().su_nodes
                           ? std::string(": the cluster fits in one "
                                         "scalable unit")
                           : std::string()) +
                      "), so their leaf ratios were not exercised and their results cannot differ by them; a "
                      "workload that crosses the spines (more GPUs, or --scenario) compares them");
  }
  for (std::size_t i = 0; i < designs.size(); ++i) {
    const auto& d = designs[i];
    nlohmann::json res = nlohmann::json::object();
    for (auto [k, v] : per[i]) {
      const auto& r = per[ref[d.switch_model]];
      if (auto it = r.find(k); it != r.end())
        v["delta_p99_pct"] =
            100.0 * (v.at("p99_us").get<double>() / it->second.at("p99_us").get<double>() - 1.0);
      res[k] = v;
    }
    out_designs.push_back({{"name", d.name},
                           {"ratio", d.ratio},
                           {"cc", d.cc.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.cc)},
                           {"switch", d.switch_model},
                           {"tiers", d.tiers},
                           {"su_nodes", d.su_nodes},
                           {"leaf_ports", d.leaf_ports},
                           {"nodes", d.nodes},
                           {"hcas", d.hcas},
                           {"switches", d.bom.switches},
                           {"cables", d.bom.cables},
                           {"transceivers", d.bom.transceivers},
                           {"cost_usd", std::round(d.bom.cost_usd)},
                           {"power_w", std::round(d.bom.power_w)},
                           {"bisection_gbps", std::round(d.bisection_gbps * 1e6) / 1e6},
                           {"engine", d.engine},
                           {"ring_fluid", ring_fluid(i)},
                           {"alternatives", d.alternatives},
                           {"fabric", {{"generator", "rail-optimized"}, {"params", d.fabric_params}}},
                           {"bom", topo::bom_to_json(d.bom)},
                           {"results", res}});
  }
  // Pareto front on (cost, headline p99); without results, on cost alone.
  auto p99_of = [&](const nlohmann::json& d) {
    const auto& r = d.at("results");
    return r.contains(headline) ? r.at(headline).at("p99_us").get<double>() : 0.0;
  };
  nlohmann::json pareto = nlohmann::json::array();
  for (const auto& a : out_designs) {
    bool dominated = false;
    for (const auto& b : out_designs) {
      const double ca = a.at("cost_usd"), cb = b.at("cost_usd"), pa = p99_of(a), pb = p99_of(b);
      if (&a != &b && cb <= ca && pb <= pa && (cb < ca || pb < pa)) dominated = true;
    }
    if (!dominated) pareto.push_back(a.at("name"));
  }
  // Recommendation: the cheapest Pareto design whose headline p99 is within 10 % of the best p99.
  std::string rec;
  if (!out_designs.empty()) {
    double best_p99 = std::numeric_limits<double>::infinity();
    for (const auto& d : out_designs) best_p99 = std::min(best_p99, p99_of(d));
    const nlohmann::json* pick = nullptr;
    // At equal cost the lower p99 wins, so the pick is on the Pareto front (it picked the first listed).
    for (const auto& d : out_designs)
      if (p99_of(d) <= 1.10 * best_p99 &&
          (!pick || d.at("cost_usd") < pick->at("cost_usd") ||
           (d.at("cost_usd") == pick->at("cost_usd") && p99_of(d) < p99_of(*pick))))
        pick = &d;
    const nlohmann::json* reference = &out_designs[ref[pick->at("switch").get<std::string>()]];
    std::ostringstream o;
    const double save = reference->at("cost_usd").get<double>() - pick->at("cost_usd").get<double>();
    if (pick == reference) {
      o << pick->at("ratio").get<std::string>() << " (" << pick->at("name").get<std::string>()
        << ") is the recommended design: no cheaper design keeps " << headline << " p99 within 10 % ("
        << money(pick->at("cost_usd")) << ", " << std::fixed << std::setprecision(1)
        << pick->at("power_w").get<double>() / 1000.0 << " kW)";
      // What the next cheaper design would save and cost, so the trade-off is stated.
      const nlohmann::json* next = nullptr;
      for (const auto& d : out_designs)
        if (d.at("switch") == pick->at("switch") && d.at("cost_usd") < pick->at("cost_usd") &&
            (!next || d.at("cost_usd") > next->at("cost_usd")))
          next = &d;
      if (next && next->at("results").contains(headline)) {
        const double s2 = pick->at("cost_usd").get<double>() - next->at("cost_usd").get<double>();
        o << "; " << next->at("ratio").get<std::string>() << " would save " << money(s2) << " ("
          << std::setprecision(0) << 100.0 * s2 / pick->at("cost_usd").get<double>() << " %) at "
          << std::showpos << std::setprecision(1)
          << next->at("results").at(headline).value("delta_p99_pct", 0.0) << std::noshowpos << " % "
          << headline << " p99";
      }
    } else {
      const auto& r = pick->at("results");
      o << pick->at("ratio").get<std::string>() << " (" << pick->at("name").get<std::string>() << ") saves "
        << money(save) << " (" << std::fixed << std::setprecision(0)
        << 100.0 * save / reference->at("cost_usd").get<double>() << " %) against "
        << reference->at("ratio").get<std::string>() << " and costs " << std::showpos << std::setprecision(1)
        << (r.contains(headline) ? r.at(headline).value("delta_p99_pct", 0.0) : 0.0) << std::noshowpos
        << " % " << headline << " p99";
    }
    if (headline.empty()) {
      o.str("");
      o << "cheapest design: " << pick->at("name").get<std::string>() << " (" << money(pick->at("cost_usd"))
        << "); no simulation was run";
    }
    rec = o.str();
  }
  nlohmann::json plan = {
      {"version", kVersion},
      {"request",
       {{"gpus", opt.gpus},
        {"gpus_per_node", opt.gpus_per_node},
        {"nics_per_node", nics},
        {"nic", opt.nic_rate},
        {"switches", opt.switches},
        {"sizes", opt.scenario_file.empty() ? nlohmann::json(opt.sizes) : nlohmann::json("the scenario's")},
        {"iterations",
         opt.scenario_file.empty() ? nlohmann::json(opt.iterations) : nlohmann::json("the scenario's")},
        {"engine", opt.engine},
        {"cc", opt.cc},
        {"scenario", opt.scenario_file.empty() ? "built-in plan workload" : opt.scenario_file}}},
      {"catalog", catalog.file},
      {"headline_metric", headline},
      {"designs", out_designs},
      {"pareto", pareto},
      {"recommendation", rec},
      {"notes", notes}};
  make_output_folder(opt.out_dir);
  write_file_atomic(opt.out_dir + "/plan.json", plan.dump(2) + "\n");
  return plan;
}

std::string plan_table(const nlohmann::json& plan) {
  std::ostringstream o;
  const auto& designs = plan.at("designs");
  // Columns: by op (allreduce first), then size.
  std::vector<std::tuple<int, std::uint64_t, std::string>> cols;
  for (const auto& d : designs)
    for (const auto& item : d.at("results").items()) { // no structured binding: clang < 16 cannot capture one
      const std::string& k = item.key();
      const auto& v = item.value();
      if (std::none_of(cols.begin(), cols.end(), [&](const auto& c) { return std::get<2>(c) == k; }))
        cols.emplace_back(v.value("op", std::string()) == "allreduce" ? 0 : 1,
                          v.value("size_bytes", std::uint64_t{0}), k);
    }
  std::sort(cols.begin(), cols.end());
  std::vector<std::string> keys;
  for (const auto& c : cols) keys.push_back(std::get<2>(c));
  o << std::left << std::setw(24) << "design" << std::setw(6) << "ratio" << std::right << std::setw(5) << "sw"
    << std::setw(7) << "cables" << std::setw(7) << "optics" << std::setw(9) << "cost" << std::setw(7) << "kW"
    << std::setw(8) << "engine";
  for (const auto& k : keys) o << "  " << std::setw(30) << (k + " p50/p99 us (d99)");
  o << "\n";
  std::int64_t n_min = std::numeric_limits<std::int64_t>::max(), n_max = 0;
  bool thin = false;
  for (const auto& d : designs) {
    o << std::left << std::setw(24) << d.at("name").get<std::string>() << std::setw(6)
      << d.at("ratio").get<std::string>() << std::right << std::setw(5)
      << d.at("switches").get<std::int64_t>() << std::setw(7) << d.at("cables").get<std::int64_t>()
      << std::setw(7) << d.at("transceivers").get<std::int64_t>() << std::setw(9) << money(d.at("cost_usd"))
      << std::setw(7) << std::fixed << std::setprecision(1) << d.at("power_w").get<double>() / 1000.0
      << std::setw(8) << d.at("engine").get<std::string>();
    for (const auto& k : keys) {
      std::ostringstream cell;
      if (d.at("results").contains(k)) {
        const auto& r = d.at("results").at(k);
        const auto n = r.value("n", std::int64_t{0});
        n_min = std::min(n_min, n), n_max = std::max(n_max, n);
        cell << std::fixed << std::setprecision(1) << r.at("p50_us").get<double>() << "/"
             << r.at("p99_us").get<double>() << (n < 100 ? "*" : "");
        thin |= n < 100;
        if (r.contains("delta_p99_pct"))
          cell << " (" << std::showpos << std::setprecision(1) << r.at("delta_p99_pct").get<double>() << "%)";
      } else {
        cell << "-";
      }
      o << "  " << std::setw(30) << cell.str();
    }
    o << "\n";
  }
  // Every percentile with its sample count (the table showed p99s of 2 samples unmarked).
  if (n_max > 0)
    o << "\nn = "
      << (n_min == n_max ? std::to_string(n_min) : std::to_string(n_min) + ".." + std::to_string(n_max))
      << " measured iterations per design and size (plan.json designs[].results[].n)"
      << (thin ? "; * p99 from fewer than the 100 samples it needs: the largest sample or near it" : "")
      << "\n";
  o << "CI (95 %, order statistics) per design and size: plan.json designs[].results[].ci_p50_us / "
       "ci_p99_us\n";
  std::string front;
  for (const auto& n : plan.at("pareto")) front += (front.empty() ? "" : ", ") + n.get<std::string>();
  const std::string metric = plan.value("headline_metric", std::string());
  o << "Pareto front (cost" << (metric.empty() ? std::string() : " vs " + metric + " p99") << "): " << front
    << "\n";
  for (const auto& n : plan.at("notes")) o << "note: " << n.get<std::string>() << "\n";
  o << "Recommendation: " << plan.at("recommendation").get<std::string>() << "\n";
  return o.str();
}

} // namespace ibn::analysis
