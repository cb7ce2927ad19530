#include "scenarios/runner.hpp"

#include "models/routing/deadlock.hpp"
#include "models/routing/reroute.hpp"
#include "scenarios/faults.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"
#include "topology/fabric_loader.hpp"
#include "topology/generators.hpp"
#include "topology/switch_models.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

// The world a scenario runs in (scenarios/runner.hpp, World): the fabric (loaded or generated, with the
// faults at t = 0 applied), its routing tables and the calibration profile.

namespace ibn::scen {

namespace {

std::string param_string(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) {
    std::ostringstream o;
    o << v.get<double>();
    return o.str();
  }
  return v.dump();
}

} // namespace

std::string scenario_path(const Scenario& s, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute() || s.base_dir.empty()) return p;
  return (std::filesystem::path(s.base_dir) / p).string();
}

FabricFacts fabric_facts(const topo::FabricSummary& summary) {
  FabricFacts f;
  f.hcas = summary.hcas;
  f.switches = summary.switches;
  f.links = summary.links;
  f.tiers = summary.tiers;
  for (const auto& t : summary.per_tier) f.oversubscription.push_back(t.oversubscription);
  f.bisection_gbps = summary.bisection_gbps;
  return f;
}

topo::Fabric build_fabric(const Scenario& s, std::vector<std::string>* warnings, std::string* source) {
  if (!s.fabric_file.empty()) {
    const auto path = scenario_path(s, s.fabric_file);
    auto loaded = topo::load_fabric_any(path);
    if (warnings) *warnings = std::move(loaded.warnings);
    if (source) *source = path;
    return std::move(loaded.fabric);
  }
  std::map<std::string, std::string> kv;
  for (const auto& [k, v] : s.fabric_params.items()) kv[k] = param_string(v);
  const auto gens = topo::builtin_generators();
  if (source) *source = "generated: " + s.fabric_generator;
  try {
    return gens.get(s.fabric_generator).factory(kv);
  } catch (const InputError& e) {
    throw InputError(note_override(s.overrides, s.file + ": key 'fabric.params': " + e.what()));
  }
}

std::uint32_t placement_nics(const Scenario& s) {
  std::uint32_t nics = 1;
  for (const auto& j : s.jobs) nics = std::max(nics, j.nics_per_node);
  for (const auto& b : s.background) nics = std::max(nics, b.nics_per_node);
  return nics;
}

std::vector<JobPlacementRequest> placement_requests(const Scenario& s, std::size_t pool_size) {
  std::vector<JobPlacementRequest> reqs;
  for (const auto& j : s.jobs) {
    JobPlacementRequest q;
    q.file = s.file;
    q.key = "jobs[" + std::to_string(reqs.size()) + "]";
    q.job = j.name;
    q.nodes = j.nodes;
    q.policy = j.placement;
    q.explicit_nodes = j.hosts;
    q.nics_per_node = j.nics_per_node;
    reqs.push_back(q);
  }
  // Background traffic takes nodes left free by the jobs (nodes = 0: all of them).
  std::size_t used = 0;
  for (const auto& j : s.jobs) used += j.nodes;
  for (std::size_t b = 0; b < s.background.size(); ++b) {
    const auto& bg = s.background[b];
    JobPlacementRequest q;
    q.job = "background" + std::to_string(b);
    q.nodes = bg.nodes ? bg.nodes : static_cast<std::uint32_t>(pool_size > used ? pool_size - used : 0);
    if (q.nodes < 2 && bg.pattern != BackgroundPattern::Incast)
      throw InputError(
          s.file + ": key 'background[" + std::to_string(b) + "].nodes': " +
          (bg.nodes ? std::to_string(q.nodes) + " node(s) asked for"
                    : std::to_string(q.nodes) + " node(s) left free by the jobs (nodes 0: all of them)") +
          "; background traffic needs at least 2");
    q.file = s.file;
    q.key = "background[" + std::to_string(b) + "]";
    q.policy = bg.placement;
    q.nics_per_node = bg.nics_per_node;
    used += q.nodes;
    reqs.push_back(q);
  }
  return reqs;
}

void refuse_tables_only_routing(const std::string& file, const std::string& algo) {
  if (algo == "df-valiant" || algo == "df-ugal")
    throw InputError(file + ": key 'routing.algorithm': '" + algo +
                     "' is not implemented in the engines: its per-message choice of a non-minimal path is "
                     "not made, so every message would take the minimal path and the results would be "
                     "df-min's under another name; use df-min (`topo routes` prints its tables)");
}

std::vector<std::string> placement_notes(const Scenario& s, const NodePool& pool) {
  std::vector<std::string> out;
  // Runs of consecutive one-HCA hosts form nodes of the most NICs asked for: a job asking for fewer still
  // takes whole nodes. (Where hosts own several HCAs a node is a host whatever the job asks for.)
  const auto node_nics = pool.nics_per_node();
  for (std::size_t j = 0; j < s.jobs.size() && !pool.host_mode(); ++j)
    if (s.jobs[j].nics_per_node < node_nics)
      out.push_back("key 'jobs[" + std::to_string(j) + "].nics_per_node': job '" + s.jobs[j].name +
                    "' asks for " + std::to_string(s.jobs[j].nics_per_node) +
                    " NIC(s) per node, but nodes are groups of " + std::to_string(node_nics) +
                    " HCAs (the most NICs per node the scenario asks for): it takes whole nodes and uses " +
                    std::to_string(s.jobs[j].nics_per_node) + " HCA(s) of each");
  if (pool.left_out() > 0)
    out.push_back(
        std::to_string(pool.left_out()) + " host(s) own fewer than " + std::to_string(node_nics) +
        " HCAs (the most NICs per node a job asks for) and are not nodes jobs are placed on, e.g. " +
        pool.left_out_example() + "; " + std::to_string(pool.size()) + " host(s) are");
  return out;
}

std::string resolved_routing(const Scenario& s, const topo::Fabric& f) {
  if (s.routing != "auto") return s.routing;
  const auto gen = f.origin.value("generator", std::string());
  return (gen == "fat-tree" || gen == "rail-optimized" || gen == "kary-ntree") ? "ftree"
         : gen == "dragonfly"                                                  ? "df-min"
                                                                               : "updn";
}

int routing_min_vls(const std::string& routing) {
  return routing.rfind("df-", 0) == 0 ? 2 : 1;
}

std::vector<std::string> sl_notes(const Scenario& s, std::uint32_t num_vls) {
  std::vector<std::string> out; // a service level maps to a VL; with one data VL every SL shares it
  if (num_vls >= 2) return out;
  auto note = [&](const std::string& key, std::uint32_t sl) {
    if (sl != 0)
      out.push_back("key '" + key + ".sl' is " + std::to_string(sl) +
                    " but packet.num_vls is 1: every SL shares VL0");
  };
  for (std::size_t j = 0; j < s.jobs.size(); ++j) note("jobs[" + std::to_string(j) + "]", s.jobs[j].sl);
  for (std::size_t b = 0; b < s.background.size(); ++b)
    note("background[" + std::to_string(b) + "]", s.background[b].sl);
  return out;
}

std::vector<std::string> check_placement(const Scenario& s, const topo::Fabric& f) {
  refuse_tables_only_routing(s.file, s.routing);
  const auto pool = NodePool::from_fabric(f, placement_nics(s));
  Rng rng = Rng::for_stream(s.seed, "placement");
  (void)place_jobs(pool, placement_requests(s, pool.size()), rng);
  if (s.faults.any()) (void)apply_initial_faults(f, plan_faults(s.faults, f, s.seed, s.file), s.file);
  return placement_notes(s, pool);
}

namespace {
/// The subnet manager reroutes after each timed link or switch fault: where the routing algorithm refuses
/// the fabric then (df-min with a group pair's only global cable down), the run would end there with its
/// results lost. Each state is routed here first, so it is exit 2 before the run, naming the fault. Faults
/// at the same time are one state (a random draw of 100 cables is one reroute, not 100).
void check_timed_reroutes(const topo::Fabric& f, const std::vector<FaultAction>& timed,
                          const std::string& algo, const std::string& file) {
  std::vector<bool> failed(f.num_links(), false);
  auto set = [&](topo::LinkId l, bool down) {
    // As the engines' SM sweep: an HCA's cable is never removed (the HCA has no other path).
    const auto& k = f.link(l);
    if (f.node(k.a.node).kind != topo::NodeKind::Switch || f.node(k.b.node).kind != topo::NodeKind::Switch)
      return false;
    const bool changed = failed[l] != down;
    failed[l] = down;
    return changed;
  };
  bool changed = false;
  for (std::size_t i = 0; i < timed.size(); ++i) {
    const auto& a = timed[i];
    if (a.kind == FaultKind::LinkDown || a.kind == FaultKind::LinkUp) {
      changed = set(a.link, a.kind == FaultKind::LinkDown) || changed;
    } else if (a.kind == FaultKind::SwitchDown || a.kind == FaultKind::SwitchUp) {
      for (const auto l : f.links_of(a.node)) changed = set(l, a.kind == FaultKind::SwitchDown) || changed;
    }
    if (!changed || (i + 1 < timed.size() && timed[i + 1].at == a.at)) continue; // `timed` is in time order
    changed = false;
    try {
      (void)routing::reroute(f, failed, algo, {});
    } catch (const InputError& e) {
      throw InputError(file + ": key 'faults': after " + a.what + ": " + e.what());
    }
  }
}
} // namespace

namespace {
World build_world_checked(const Scenario& s);
} // namespace

World build_world(const Scenario& s) try { return build_world_checked(s); } catch (const InputError& e) {
  throw InputError(note_override(s.overrides, e.what())); // "FILE: key K" where K came from --set
}

namespace {
World build_world_checked(const Scenario& s) {
  World w;
  w.fabric = build_fabric(s, &w.warnings, &w.fabric_source);
  if (s.nccl_collnet) // CollNet needs SHARP in the switches: NVIDIA's InfiniBand (Quantum) models have it
    for (const auto& n : w.fabric.nodes())
      if (n.kind == topo::NodeKind::Switch && !n.switch_model.empty())
        if (const auto* m = topo::find_switch_model(n.switch_model); m && std::string(m->link_layer) != "ib")
          throw InputError(s.file + ": key 'nccl.collnet': switch '" + n.name + "' (" + m->name +
                           ") has no SHARP in-network reduction");
  w.facts = fabric_facts(topo::describe(w.fabric));
  const std::string algo = resolved_routing(s, w.fabric);
  w.routing_name = algo;
  refuse_tables_only_routing(s.file, algo);
  const auto reg = routing::builtin_routing();
  try {
    w.tables = std::make_unique<routing::RoutingTables>(reg.get(algo).factory(w.fabric, {}));
  } catch (const InputError& e) {
    throw InputError(s.file + ": key 'routing.algorithm': " + e.what());
  }
  if (!s.calibration.empty()) {
    // The profile sets the device model; explicit "packet" keys in the scenario still win.
    const auto path = scenario_path(s, s.calibration);
    w.profile = calib::Profile::load(path);
    calib::apply(*w.profile, w.packet);
    w.calibration = {{"file", path},
                     {"devices", w.profile->devices},
                     {"link_rate_gbps", w.profile->link_rate_gbps},
                     {"noise_segments", w.profile->noise.segments.size()},
                     {"inputs", w.profile->inputs.size()}};
  }
  apply_packet_settings(s, w.packet);
  if (w.packet.num_vls < routing_min_vls(algo)) {
    // MIN routing on a dragonfly is deadlock-free with the VL raised after the global hop (docs/routing.md):
    // one VL deadlocks the packet engine on a credit cycle. Two by default; one asked for is refused.
    if (s.engine == EngineKind::Packet && s.given.contains(nlohmann::json::json_pointer("/packet/num_vls")))
      throw InputError(s.file + ": key 'packet.num_vls': " + std::to_string(w.packet.num_vls) + " VL with '" +
                       algo +
                       "' routing: dragonfly MIN routing needs 2 VLs to be deadlock-free (the VL goes up "
                       "after the global hop); give 2 or more");
    w.packet.num_vls = routing_min_vls(algo);
    w.auto_vls = true; // not the scenario's: the flow engine (no VLs) does not warn of it
  }
  if (s.faults.any()) {
    // Faults at t = 0 change the fabric before routing (removed cables, new speeds): both engines then run on
    // it with routes computed around them. The world's facts stay those of the fabric as designed.
    const auto plan = plan_faults(s.faults, w.fabric, s.seed, s.file);
    auto ff = apply_initial_faults(w.fabric, plan, s.file);
    w.fabric = std::move(ff.fabric);
    w.timed_faults = std::move(ff.timed);
    if (s.faults.reroute) check_timed_reroutes(w.fabric, w.timed_faults, algo, s.file);
    w.packet.link_bit_error_rate = std::move(ff.link_ber);
    w.faults = plan.described;
    try {
      w.tables = std::make_unique<routing::RoutingTables>(reg.get(algo).factory(w.fabric, {}));
    } catch (const InputError& e) {
      throw InputError(s.file + ": key 'faults': routing '" + algo +
                       "' around the faults at t = 0: " + e.what());
    }
  }
  w.cable_directions =
      std::make_shared<const topo::CableDirections>(topo::cable_directions_by_tier(w.fabric));
  try {
    w.pool = std::make_shared<const NodePool>(NodePool::from_fabric(w.fabric, placement_nics(s)));
  } catch (const InputError&) {
    // Left null: the run builds the pool again and reports the error where it always has (its placement).
  }
  if (w.pool)
    for (auto& n : placement_notes(s, *w.pool)) w.warnings.push_back(std::move(n));
  if (s.engine == EngineKind::Packet)
    for (const auto& n : sl_notes(s, w.packet.num_vls)) w.warnings.push_back("no effect: " + n);
  return w;
}
} // namespace

} // namespace ibn::scen

namespace ibn::scen {

double hca_link_gbps(const World& w, std::uint32_t hca) {
  double gbps = 0;
  const auto node = w.tables->hca_nodes()[hca];
  for (const auto l : w.fabric.links_of(node)) gbps = std::max(gbps, w.fabric.link(l).speed.rate_gbps());
  return gbps;
}

Time hca_leaf_latency(const World& w, std::uint32_t hca) {
  const auto node = w.tables->hca_nodes()[hca];
  const auto& dev = w.packet;
  std::optional<Time> best;
  for (const auto l : w.fabric.links_of(node)) {
    const auto& link = w.fabric.link(l);
    const auto& peer = w.fabric.nodes()[link.other(node)];
    const bool sw = peer.kind == topo::NodeKind::Switch || peer.kind == topo::NodeKind::Router;
    const Time t = dev.cable_latency(link) * 2 + (sw ? dev.switch_latency_of(peer) : Time::zero());
    if (!best || t < *best) best = t;
  }
  return best ? dev.nic_tx_latency + dev.nic_rx_latency + *best : Time::zero();
}

InputError collective_error(const std::string& where, const std::string& job, std::uint64_t size, CollOp op,
                            const InputError& e) {
  const bool algo = std::string_view(e.what()).starts_with("algorithm:") && where.ends_with(".op'");
  return InputError((algo ? where.substr(0, where.size() - 4) + ".algorithm'" : where) + ": job '" + job +
                    "', " + format_size(size) + " " + to_string(op) + ": " + e.what());
}

void explain_deadlock(const Scenario& s, const World& w, const std::exception& deadlock) {
  if (!w.tables) return;
  const auto rep = routing::check_deadlock_free(
      w.fabric, *w.tables, routing::vl_function(w.tables->vl_rule()), s.adaptive_routing != pkt::ArMode::Off);
  if (rep.deadlock_free) return;
  std::string loop;
  for (std::size_t i = 0; i < rep.cycle.size() && i < 8; ++i) loop += "\n  " + rep.cycle[i];
  if (rep.cycle.size() > 8) loop += "\n  ... (" + std::to_string(rep.cycle.size()) + " channels)";
  throw InputError(
      s.file + ": key 'routing.algorithm': the packet run deadlocked: routing '" + w.routing_name +
      "' on this fabric allows a credit loop (lossless links wait on each "
      "other in a cycle; docs/routing.md \"deadlock-free\"), and the traffic closed it. Use a "
      "deadlock-free routing (updn on any fabric, ftree on fat-trees, df-min on dragonflies) or the "
      "flow engine (no credits). The routing's channel cycle:" +
      loop + "\nThe run: " + deadlock.what());
}

} // namespace ibn::scen
