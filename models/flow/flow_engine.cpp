// FlowEngine: see flow_engine.hpp. SimGrid 3.32 API (Debian 12; the build is pinned to it, see
// simgrid_network_model.hpp); kernel-level parts are marked "3.32".
#include "models/flow/flow_engine.hpp"

#include "models/flow/flow_impl.hpp"
#include "models/packet/config.hpp"
#include "sim/child_processes.hpp"
#include "sim/error.hpp"

#include <simgrid/version.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <stdexcept>
#include <typeinfo>
#include <unordered_map>

namespace ibn::flow {

void FlowConfig::validate() const {
  if (mtu_bytes < 256 || mtu_bytes > 4096)
    throw InputError("flow.mtu_bytes: " + std::to_string(mtu_bytes) + " is outside 256..4096");
  if (header_bytes > 4096)
    throw InputError("flow.header_bytes: " + std::to_string(header_bytes) + " is too large");
  if (reth_bytes > 4096) throw InputError("flow.reth_bytes: " + std::to_string(reth_bytes) + " is too large");
  auto non_negative = [](Time t, const char* key) {
    if (t < Time::zero()) throw InputError(std::string("flow.") + key + ": must not be negative");
  };
  non_negative(switch_latency, "switch_latency");
  non_negative(fec_latency, "fec_latency");
  non_negative(nic_tx_latency, "nic_tx_latency");
  non_negative(nic_rx_latency, "nic_rx_latency");
  if (!(hca_rate_gbps >= 0)) throw InputError("flow.hca_rate_gbps: must not be negative");
}

nlohmann::json FlowConfig::to_json() const {
  nlohmann::json j = {
      {"mtu_bytes", mtu_bytes},
      {"header_bytes", header_bytes},
      {"reth_bytes", reth_bytes},
      {"header_efficiency", header_efficiency()},
      {"switch_latency_ns", switch_latency.to_ns()},
      {"switch_latency_from_model", switch_latency_from_model},
      {"fec_latency_ns", fec_latency.to_ns()},
      {"nic_tx_latency_ns", nic_tx_latency.to_ns()},
      {"nic_rx_latency_ns", nic_rx_latency.to_ns()},
      {"hca_rate_gbps", hca_rate_gbps},
      {"adaptive_routing", adaptive_routing},
      {"factors", factors ? "calibrated" : "none"},
      {"s4u_comms", s4u_comms},
      {"solver", solver == Solver::Native ? "native" : "simgrid"},
      {"simgrid", {{"network/model", "CM02"}, {"network/crosstraffic", 0}, {"network/TCP-gamma", 0}}}};
  // The host path (common::DeviceKnobs), recorded when a knob is not neutral.
  if (host_caps_rate() || host_latency() > Time::zero())
    j["host"] = {{"pcie_gen", pcie_gen},
                 {"pcie_lanes", pcie_lanes},
                 {"gpudirect", gpudirect},
                 {"host_copy_gbps", host_copy_gbps},
                 {"host_staging_latency_ns", host_staging_latency.to_ns()},
                 {"cross_numa", cross_numa},
                 {"cross_numa_bw_factor", cross_numa_bw_factor},
                 {"cross_numa_latency_ns", cross_numa_latency.to_ns()},
                 {"sriov", sriov},
                 {"sriov_rate_factor", sriov_rate_factor},
                 {"sriov_latency_ns", sriov_latency.to_ns()}};
  return j;
}

FlowConfig flow_config_from(const pkt::PacketConfig& p) {
  FlowConfig c;
  // Both configurations are a common::Framing and a common::DeviceKnobs: copying those parts copies every
  // shared knob, including any added to models/common later.
  static_cast<common::Framing&>(c) = static_cast<const common::Framing&>(p);
  static_cast<common::DeviceKnobs&>(c) = static_cast<const common::DeviceKnobs&>(p);
  c.adaptive_routing = p.ar_mode != pkt::ArMode::Off;
  c.link_bit_error_rate = p.link_bit_error_rate;
  return c;
}

namespace {

// SimGrid's engine lives in process globals that cannot be reset: one FlowEngine per process, ever.
std::atomic<bool> g_constructed{false}; // NOLINT: mirrors SimGrid's own process-wide singleton

} // namespace

std::vector<std::uint32_t> FlowEngine::Impl::needed_links() const {
  std::vector<std::uint32_t> need;
  const std::size_t nsw = tables.switch_nodes().size();
  std::vector<std::uint32_t> seen(nsw, kNil); // per switch: the last destination (index into used) seen
  std::vector<std::uint32_t> stack;
  for (std::uint32_t k = 0; k < used.size(); ++k) {
    const routing::HcaIndex dst = used[k];
    const topo::NodeId dst_node = tables.hca_nodes()[dst];
    auto enter = [&](std::uint32_t sw) {
      if (sw == routing::RoutingTables::kNone || seen[sw] == k) return;
      seen[sw] = k;
      stack.push_back(sw);
    };
    for (const routing::HcaIndex src : used) {
      const topo::LinkId l = tables.hca_link(src);
      if (src == dst || l == topo::kNoLink) continue; // (an uncabled HCA: compute_route throws as before)
      need.push_back(directed(l, tables.hca_nodes()[src]));
      enter(tables.hca_switch_index(src));
    }
    while (!stack.empty()) {
      const std::uint32_t sw = stack.back();
      stack.pop_back();
      const topo::NodeId sw_node = tables.switch_nodes()[sw];
      auto take = [&](routing::Port p) {
        const topo::LinkId l = p == routing::kNoPort ? topo::kNoLink : tables.link_at(sw, p);
        if (l == topo::kNoLink) return;
        need.push_back(directed(l, sw_node));
        const topo::NodeId peer = tables.peer_at(sw, p);
        if (peer != dst_node) enter(tables.switch_index(peer));
      };
      if (cfg.adaptive_routing) {
        const routing::ArGroupView g = tables.ar_group(sw_node, dst);
        if (g.empty()) continue;
        take(g.static_port());
        for (const routing::Port p : g.ports()) take(p);
      } else {
        take(tables.next_hop_by_index(sw, dst));
      }
    }
  }
  std::sort(need.begin(), need.end());
  need.erase(std::unique(need.begin(), need.end()), need.end());
  return need;
}

// The native solver (FluidNetwork; flow_engine.hpp "Solvers").
void FlowEngine::Impl::decide_solver() {
  if (solver_decided) return;
  solver_decided = true;
  native = native_possible();
  if (!native) return;
  const auto& made = dl.made_links();
  std::vector<double> cap(made.size());
  for (std::size_t k = 0; k < made.size(); ++k) cap[k] = made[k].link->get_bandwidth();
  fluid = std::make_unique<FluidNetwork>(std::move(cap));
  if (armed != nullptr) armed->remove(); // the loop is ours: no SimGrid timer
  armed = nullptr;
}
void FlowEngine::Impl::run_native() {
  try {
    while (!error) {
      const std::int64_t tf = fluid->next_completion();
      const std::int64_t tq = queue.empty() ? FluidNetwork::kNever : queue.top().time.count_ps();
      if (tf == FluidNetwork::kNever && tq == FluidNetwork::kNever) break;
      if (tf <= tq) {
        now = Time::ps(tf);
        fluid_done.clear();
        fluid->complete(tf, fluid_done);
        for (const std::uint32_t fid : fluid_done) {
          const std::uint32_t i = xfer_of_fid[fid];
          xfer_of_fid[fid] = kNil;
          xfers[i].fid = kNil;
          finished(i, now);
        }
      } else {
        dispatch_due(tq);
      }
    }
  } catch (...) {
    error = std::current_exception();
  }
}

// ---------------------------------------------------------------------------------------------------------
FlowEngine::FlowEngine(const topo::Fabric& fabric, const routing::RoutingTables& tables, FlowConfig config,
                       std::optional<std::vector<routing::HcaIndex>> used_hcas,
                       const topo::CableDirections* cable_directions) {
  config.validate();
  if (tables.num_hcas() == 0) throw InputError("flow engine: the fabric has no HCAs");
  if (g_constructed.exchange(true))
    throw std::logic_error("flow engine: SimGrid's engine is a process-wide singleton and a FlowEngine was "
                           "already constructed in this process; run another flow simulation in a child "
                           "process (ibn::run_in_child_process)");
  impl_ = std::make_unique<Impl>(fabric, tables, std::move(config), std::move(used_hcas));
  impl_->cable_directions = cable_directions;
  impl_->build();
}

FlowEngine::~FlowEngine() = default;

Time FlowEngine::now() const {
  return impl_->now;
}
std::size_t FlowEngine::num_hcas() const {
  return impl_->hosts.size();
}
std::string FlowEngine::simgrid_path() const {
  return impl_->use_direct ? "network-model" : "s4u-comm";
}
std::size_t FlowEngine::links_made() const {
  return impl_->links_made;
}
std::size_t FlowEngine::hosts_made() const {
  return impl_->hca_of_netpoint.size();
}
bool FlowEngine::platform_subset() const {
  return impl_->subset;
}
bool FlowEngine::constructed_in_this_process() {
  return g_constructed.load();
}

void FlowEngine::send(const eng::TransferSpec& spec, eng::DeliveredFn on_delivered) {
  impl_->post(spec, std::move(on_delivered));
}

void FlowEngine::call_at(Time t, std::function<void()> fn) {
  if (t < impl_->now) throw std::logic_error("flow engine: call_at in the past");
  std::uint32_t slot;
  if (!impl_->free_timers.empty()) {
    slot = impl_->free_timers.back();
    impl_->free_timers.pop_back();
    impl_->timers[slot] = std::move(fn);
  } else {
    slot = static_cast<std::uint32_t>(impl_->timers.size());
    impl_->timers.push_back(std::move(fn));
  }
  impl_->push(t, Impl::Kind::Timer, slot, impl_->next_seq++);
}

std::string FlowEngine::solver() const {
  const bool native = impl_->solver_decided ? impl_->native : impl_->native_possible();
  return native ? "native" : "simgrid";
}

void FlowEngine::run() {
  if (impl_->error) std::rethrow_exception(impl_->error);
  impl_->decide_solver();
  if (impl_->native)
    impl_->run_native();
  else
    impl_->engine->run();
  if (impl_->error) std::rethrow_exception(impl_->error);
}

eng::EngineReport FlowEngine::report() const {
  const Impl& m = *impl_;
  eng::EngineReport r;
  r.engine = "flow";
  r.events = m.events;
  r.transfers = m.delivered;
  const auto& made = m.dl.made_links(); // in directed-id order
  std::vector<std::uint64_t> bytes(made.size()), wire(made.size());
  for (std::size_t k = 0; k < made.size(); ++k) bytes[k] = made[k].bytes, wire[k] = made[k].wire;
  for (const Impl::Qp& q : m.qps)
    for (const std::uint32_t d : q.route) bytes[m.dl.slot(d)] += q.bytes, wire[m.dl.slot(d)] += q.wire;
  // A directed link that carried nothing, or was never made, is folded into idle_links per tier (a record of
  // zeros: the tier tables are the same), so that the report of a small job on a large fabric costs little:
  // idle = every cable direction of the tier pair minus those that carried something.
  topo::CableDirections idle =
      m.cable_directions ? *m.cable_directions : topo::cable_directions_by_tier(m.fabric);
  const std::uint32_t cables = 2 * m.fabric.num_links();
  for (std::size_t k = 0; k < made.size(); ++k) {
    const std::uint32_t d = made[k].id;
    if (d >= cables || (bytes[k] == 0 && wire[k] == 0)) continue; // (an injection link is no cable)
    const topo::LinkId l = d / 2;
    const topo::Link& link = m.fabric.link(l);
    const topo::NodeId from = d % 2 == 0 ? link.a.node : link.b.node;
    const topo::NodeId to = d % 2 == 0 ? link.b.node : link.a.node;
    eng::LinkRecord rec;
    rec.from_tier = m.fabric.node(from).tier;
    rec.to_tier = m.fabric.node(to).tier;
    for (auto& [tiers, n] : idle)
      if (tiers == std::pair{rec.from_tier, rec.to_tier}) --n;
    rec.capacity_gbps = link.speed.rate_gbps();
    if (m.faults && !m.faults->rate_gbps.empty() && m.faults->rate_gbps[l] > 0)
      rec.capacity_gbps = m.faults->rate_gbps[l]; // a degrade at t > 0: its last rate
    rec.payload_bytes = bytes[k];
    rec.wire_bytes = wire[k];
    rec.bytes = rec.payload_bytes; // legacy field (payload in this engine; see LinkRecord)
    // Busy = the time the cable spends transmitting the wire bytes of those messages at its data rate.
    rec.busy = serialization_time(wire[k], link.rate_bps());
    r.links.push_back(rec);
  }
  for (const auto& [tiers, n] : idle)
    if (n > 0) r.idle_links.push_back({tiers.first, tiers.second, n});
  r.extra = {{"simgrid_flows", m.flows},  {"simgrid_path", m.use_direct ? "network-model" : "s4u-comm"},
             {"solver", solver()},
             {"config", m.cfg.to_json()}, {"simgrid_version", "3.32"},
             {"hosts", m.hosts.size()},   {"simgrid_links", m.platform_links}}; // (made or not)
  if (m.fluid)
    r.extra["native_solver"] = {{"solves", m.fluid->solves()},
                                {"flows_rerated", m.fluid->flows_solved()}};
  if (m.faults) m.fault_report(r.extra);
  if (!m.direct_unavailable.empty()) r.extra["network_model_path_unavailable"] = m.direct_unavailable;
  return r;
}

std::vector<topo::LinkId> FlowEngine::simgrid_route(routing::HcaIndex src, routing::HcaIndex dst) const {
  std::vector<sg::Link*> links;
  double lat = 0;
  impl_->host_of(src)->route_to(impl_->host_of(dst), links, &lat);
  std::unordered_map<const sg::Link*, topo::LinkId> id;
  for (const Impl::DirLink& d : impl_->dl.made_links())
    if (d.id < 2 * impl_->fabric.num_links()) id.emplace(d.link, static_cast<topo::LinkId>(d.id / 2));
  std::vector<topo::LinkId> out;
  for (const sg::Link* l : links)
    if (const auto it = id.find(l); it != id.end()) out.push_back(it->second); // (not an HCA injection link)
  return out;
}

FlowEngine::StaticPath FlowEngine::static_path(routing::HcaIndex src, routing::HcaIndex dst) const {
  const std::size_t n = impl_->hosts.size();
  if (src >= n || dst >= n || src == dst) throw std::logic_error("FlowEngine::static_path: bad HCA pair");
  static_cast<void>(impl_->host_of(src)); // declared (std::logic_error if not); compute_route checks links
  static_cast<void>(impl_->host_of(dst));
  StaticPath p;
  impl_->compute_route(src, dst, false, p.links);
  std::int64_t lat = 0;
  double bw = std::numeric_limits<double>::infinity();
  for (const std::uint32_t d : p.links) {
    lat += impl_->dl[d].lat_ps;
    bw = std::min(bw, impl_->dl[d].link->get_bandwidth());
  }
  p.bytes_per_s = bw;
  p.delay = impl_->cfg.tx_latency() + impl_->cfg.nic_rx_latency + Time::ps(lat);
  return p;
}

double FlowEngine::link_bytes_per_s(std::uint32_t link) const {
  if (!impl_->dl.made(link))
    throw std::logic_error("FlowEngine::link_bytes_per_s: a link the platform does not hold");
  return impl_->dl[link].link->get_bandwidth();
}

void FlowEngine::account(const StaticPath& path, std::uint64_t payload, std::uint64_t wire,
                         std::uint64_t messages) {
  for (const std::uint32_t d : path.links) {
    if (!impl_->dl.made(d)) throw std::logic_error("FlowEngine::account: a link the platform does not hold");
    impl_->dl[d].bytes += payload;
    impl_->dl[d].wire += wire;
  }
  impl_->delivered += messages;
}

const FlowConfig& FlowEngine::config() const {
  return impl_->cfg;
}

Time FlowEngine::simgrid_route_latency(routing::HcaIndex src, routing::HcaIndex dst) const {
  std::vector<sg::Link*> links;
  double lat = 0;
  impl_->host_of(src)->route_to(impl_->host_of(dst), links, &lat);
  return from_seconds(lat);
}

} // namespace ibn::flow
