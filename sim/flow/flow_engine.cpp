// FlowEngine: see flow_engine.hpp. SimGrid 3.32 API (Debian 12); kernel-level parts are marked "3.32".
#include "sim/flow/flow_engine.hpp"

#include "models/packet/config.hpp"
#include "sim/error.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <simgrid/version.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <list>
#include <queue>
#include <stdexcept>
#include <unordered_map>

namespace ibn::flow {

namespace sg = simgrid::s4u;
namespace skr = simgrid::kernel::routing;
namespace skres = simgrid::kernel::resource;

void FlowConfig::validate() const {
  if (mtu_bytes < 256 || mtu_bytes > 4096)
    throw InputError("flow.mtu_bytes: " + std::to_string(mtu_bytes) + " is outside 256..4096");
  if (header_bytes > 4096)
    throw InputError("flow.header_bytes: " + std::to_string(header_bytes) + " is too large");
  auto non_negative = [](Time t, const char* key) {
    if (t < Time::zero()) throw InputError(std::string("flow.") + key + ": must not be negative");
  };
  non_negative(switch_latency, "switch_latency");
  non_negative(fec_latency, "fec_latency");
  non_negative(nic_tx_latency, "nic_tx_latency");
  non_negative(nic_rx_latency, "nic_rx_latency");
}

nlohmann::json FlowConfig::to_json() const {
  return {{"mtu_bytes", mtu_bytes},
          {"header_bytes", header_bytes},
          {"header_efficiency", header_efficiency()},
          {"switch_latency_ns", switch_latency.to_ns()},
          {"fec_latency_ns", fec_latency.to_ns()},
          {"nic_tx_latency_ns", nic_tx_latency.to_ns()},
          {"nic_rx_latency_ns", nic_rx_latency.to_ns()},
          {"adaptive_routing", adaptive_routing},
          {"factors", factors ? "calibrated" : "none"},
          {"simgrid", {{"network/model", "CM02"}, {"network/crosstraffic", 0}, {"network/TCP-gamma", 0}}}};
}

FlowConfig flow_config_from(const pkt::PacketConfig& p) {
  FlowConfig c;
  c.mtu_bytes = p.mtu_bytes;
  c.header_bytes = p.header_bytes;
  c.switch_latency = p.switch_latency;
  c.fec_latency = p.fec_latency;
  c.nic_tx_latency = p.nic_tx_latency;
  c.nic_rx_latency = p.nic_rx_latency;
  c.adaptive_routing = p.ar_mode != pkt::ArMode::Off;
  return c;
}

namespace {

// SimGrid's engine lives in process globals that cannot be reset: one FlowEngine per process, ever.
std::atomic<bool> g_constructed{false}; // NOLINT: mirrors SimGrid's own process-wide singleton

constexpr std::uint32_t kNil = ~std::uint32_t{0};

// --- SimGrid 3.32 scalability workaround -------------------------------------------------------------
// Host-to-host comms (Comm::sendto_*) are detached inside the kernel and referenced from the maestro's
// activity list (a std::list); when one finishes, CommImpl::finish() calls list::remove() on it, a scan of
// EVERY comm in flight. With n concurrent messages that is O(n) per message (a 4,096-rank ring spent most
// of its time there). We keep our own reference to each comm (the s4u CommPtr, until delivery) and take the
// maestro's reference off the list right after the start, where it is the last element, so the scan at
// finish() sees a short list. Only compiled for the 3.32 layout, and checked at run time: the element must
// be the comm just started, else the workaround switches itself off (slow but correct).
#if SIMGRID_VERSION_MAJOR == 3 && SIMGRID_VERSION_MINOR == 32
#define IBN_FLOW_TRIM_MAESTRO_LIST 1
extern "C" void* _ZN7simgrid6kernel5actor9ActorImpl4selfEv(); // ActorImpl::self(), exported, header private
constexpr std::size_t kActorActivitiesOffset = 0xc0;          // ActorImpl::activities_ in 3.32 (x86-64)
using ActivityList = std::list<boost::intrusive_ptr<simgrid::kernel::activity::ActivityImpl>>;
#else
#define IBN_FLOW_TRIM_MAESTRO_LIST 0
#endif
constexpr int kMaxHops = 64;

double to_seconds(Time t) {
  return static_cast<double>(t.count_ps()) * 1e-12;
}
Time from_seconds(double s) {
  return Time::ps(std::llround(s * 1e12));
}

struct QpKey {
  std::uint32_t src, dst, qp;
  bool operator==(const QpKey&) const = default;
};
struct QpKeyHash {
  std::size_t operator()(const QpKey& k) const {
    std::uint64_t h = (static_cast<std::uint64_t>(k.src) << 32) ^ k.dst;
    h ^= static_cast<std::uint64_t>(k.qp) * 0x9E3779B97F4A7C15ull;
    h *= 0xBF58476D1CE4E5B9ull;
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
};

} // namespace

// ---------------------------------------------------------------------------------------------------------
struct FlowEngine::Impl {
  enum class Kind : std::uint8_t { Timer, Start, Deliver };
  struct Event {
    std::int64_t t_ps;
    std::uint64_t seq;
    std::uint32_t idx;
    Kind kind;
    bool operator>(const Event& o) const { return t_ps != o.t_ps ? t_ps > o.t_ps : seq > o.seq; }
  };
  struct Xfer {
    std::uint32_t src = 0, dst = 0;
    std::uint64_t bytes = 0;
    std::uint64_t seq = 0;
    std::uint32_t qp = kNil;
    std::uint32_t next_in_qp = kNil; ///< FIFO of messages waiting for their QP
    eng::DeliveredFn fn;
    sg::CommPtr comm;                 ///< held from start to delivery (see the workaround above)
    std::vector<std::uint32_t> route; ///< directed links (2 * LinkId + dir)
  };
  struct Qp {
    bool busy = false;
    std::uint32_t head = kNil, tail = kNil;
  };

  // A NetZone of ours: routes answered on demand from the routing tables (3.32 kernel API).
  class Zone final : public skr::NetZoneImpl {
   public:
    Zone(const std::string& name, Impl* owner) : skr::NetZoneImpl(name), owner_(owner) {}
    void get_local_route(const skr::NetPoint* src, const skr::NetPoint* dst, skr::Route* into,
                         double* latency) override {
      owner_->fill_route(static_cast<std::uint32_t>(src->id()), static_cast<std::uint32_t>(dst->id()), into,
                         latency);
    }

   private:
    Impl* owner_;
  };

  const topo::Fabric& fabric;
  const routing::RoutingTables& tables;
  FlowConfig cfg;
  std::unique_ptr<sg::Engine> engine;
  Zone* zone = nullptr;
  std::vector<sg::Host*> hosts;
  std::vector<sg::Link*> dlinks;         ///< per directed link: 2 * LinkId + (0: a->b, 1: b->a)
  std::vector<std::uint32_t> active;     ///< flows in the network per directed link
  std::vector<std::uint64_t> link_bytes; ///< payload bytes carried per directed link
  const std::vector<std::uint32_t>* pending_route = nullptr; ///< the route of the comm being started
  double pending_extra_s = 0; ///< NIC latencies and latency offset of the comm being started
  bool trim_maestro_list = IBN_FLOW_TRIM_MAESTRO_LIST != 0;

  std::vector<Xfer> xfers;
  std::vector<std::uint32_t> free_xfers;
  std::vector<std::function<void()>> timers;
  std::vector<std::uint32_t> free_timers;
  std::vector<Qp> qps;
  std::unordered_map<QpKey, std::uint32_t, QpKeyHash> qp_index;
  std::unordered_map<const void*, std::uint32_t> in_network; ///< SimGrid comm (ActivityImpl*) -> xfer

  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue;
  std::uint64_t next_seq = 0;
  Time now;
  simgrid::kernel::timer::Timer* armed = nullptr;
  std::int64_t armed_ps = 0;
  std::exception_ptr error;
  std::uint64_t events = 0, delivered = 0, comms = 0;

  Impl(const topo::Fabric& f, const routing::RoutingTables& t, FlowConfig c)
      : fabric(f), tables(t), cfg(std::move(c)) {}

  // --- routes ---
  std::uint32_t directed(topo::LinkId l, topo::NodeId from) const {
    return 2 * l + (fabric.link(l).a.node == from ? 0u : 1u);
  }

  /// The route of src -> dst as directed links: static (LFT) ports, or with `adaptive` the least-loaded
  /// port of each AR group. Throws InputError when the tables have no route.
  void compute_route(std::uint32_t src, std::uint32_t dst, bool adaptive,
                     std::vector<std::uint32_t>& out) const {
    out.clear();
    const topo::NodeId src_node = tables.hca_nodes()[src];
    const topo::NodeId dst_node = tables.hca_nodes()[dst];
    const topo::LinkId first = tables.hca_link(src);
    std::uint32_t sw = tables.hca_switch_index(src);
    if (first == topo::kNoLink || sw == routing::RoutingTables::kNone)
      throw InputError("flow engine: HCA " + fabric.node(src_node).name + " is not cabled to a switch");
    out.push_back(directed(first, src_node));
    for (int hop = 0; hop < kMaxHops; ++hop) {
      const topo::NodeId sw_node = tables.switch_nodes()[sw];
      routing::Port port = routing::kNoPort;
      if (adaptive) {
        const routing::ArGroupView g = tables.ar_group(sw_node, dst);
        std::uint32_t best_load = ~0u;
        for (std::size_t i = 0; i < g.size(); ++i) {
          const routing::Port p = g[i];
          const topo::LinkId l = tables.link_at(sw, p);
          if (l == topo::kNoLink) continue;
          const std::uint32_t load = active[directed(l, sw_node)];
          if (load < best_load) best_load = load, port = p;
        }
      } else {
        port = tables.next_hop_by_index(sw, dst);
      }
      if (port == routing::kNoPort)
        throw InputError("flow engine: no route from " + fabric.node(src_node).name + " to " +
                         fabric.node(dst_node).name + " at switch " + fabric.node(sw_node).name);
      const topo::LinkId l = tables.link_at(sw, port);
      out.push_back(directed(l, sw_node));
      const topo::NodeId peer = tables.peer_at(sw, port);
      if (peer == dst_node) return;
      sw = tables.switch_index(peer);
      if (sw == routing::RoutingTables::kNone)
        throw InputError("flow engine: route from " + fabric.node(src_node).name + " to " +
                         fabric.node(dst_node).name + " ends at " + fabric.node(peer).name);
    }
    throw InputError("flow engine: routing loop from " + fabric.node(src_node).name + " to " +
                     fabric.node(dst_node).name);
  }

  void fill_route(std::uint32_t src, std::uint32_t dst, skr::Route* into, double* latency) {
    std::vector<std::uint32_t> tmp;
    const std::vector<std::uint32_t>* r = pending_route;
    if (r == nullptr) { // asked outside send() (Host::route_to): the static route
      compute_route(src, dst, false, tmp);
      r = &tmp;
    }
    for (const std::uint32_t d : *r) {
      into->link_list_.push_back(dlinks[d]->get_impl());
      if (latency != nullptr) *latency += dlinks[d]->get_latency();
    }
    if (latency != nullptr && pending_route != nullptr) *latency += pending_extra_s;
  }

  // --- platform ---
  void build() {
    std::vector<std::string> args{"ibnetsim-flow",
                                  "--cfg=network/model:CM02",
                                  "--cfg=network/crosstraffic:0",
                                  "--cfg=network/TCP-gamma:0",
                                  "--cfg=surf/precision:1e-12",
                                  "--log=root.thres:warning",
                                  "--log=xbt_cfg.thres:warning"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    engine = std::make_unique<sg::Engine>(&argc, argv.data());

    zone = new Zone("ibnetsim", this); // the first zone becomes the root; SimGrid owns and deletes it
    sg::NetZone* z = zone->get_iface();
    const std::size_t n = tables.num_hcas();
    hosts.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      sg::Host* h = z->create_host("h" + std::to_string(i), 1.0);
      if (h->get_netpoint()->id() != i)
        throw std::logic_error("flow engine: unexpected SimGrid host numbering");
      hosts.push_back(h->seal());
    }
    const double eff = cfg.header_efficiency();
    dlinks.resize(2 * fabric.num_links());
    for (topo::LinkId l = 0; l < fabric.num_links(); ++l) {
      const topo::Link& link = fabric.link(l);
      const double bw = static_cast<double>(link.rate_bps()) / 8.0 * eff; // bytes per second
      for (int dir = 0; dir < 2; ++dir) {
        const topo::NodeId from = dir == 0 ? link.a.node : link.b.node;
        const topo::NodeKind kind = fabric.node(from).kind;
        Time lat = link.latency + cfg.fec_latency;
        if (kind == topo::NodeKind::Switch || kind == topo::NodeKind::Router) lat += cfg.switch_latency;
        sg::Link* sl = z->create_link("l" + std::to_string(l) + (dir == 0 ? "+" : "-"), bw);
        sl->set_latency(to_seconds(lat));
        dlinks[2 * l + dir] = sl->seal();
      }
    }
    in_network.reserve(2 * n);
    qp_index.reserve(2 * n);
    active.assign(dlinks.size(), 0);
    link_bytes.assign(dlinks.size(), 0);
    z->seal();
    engine->seal_platform();

    if (cfg.factors) {
      auto* model = engine->get_netzone_root()->get_network_model();
      FactorFn factors = cfg.factors;
      model->set_bw_factor_cb([factors](double size, const sg::Host*, const sg::Host*,
                                        const std::vector<sg::Link*>&,
                                        const std::unordered_set<sg::NetZone*>&) {
        return factors(static_cast<std::uint64_t>(size)).bw_factor;
      });
    }
    sg::Link::on_communication_state_change_cb(
        [this](skres::NetworkAction& na, skres::Action::State) { on_comm_state(na); });
  }

  // --- events ---
  void push(Time t, Kind kind, std::uint32_t idx, std::uint64_t seq) {
    queue.push(Event{t.count_ps(), seq, idx, kind});
    arm();
  }

  /// Keeps one SimGrid timer at the earliest pending event.
  void arm() {
    if (queue.empty() || error) return;
    const std::int64_t head = queue.top().t_ps;
    if (armed != nullptr) {
      if (armed_ps <= head) return;
      armed->remove();
    }
    armed_ps = head;
    armed = simgrid::kernel::timer::Timer::set(to_seconds(Time::ps(head)), [this] {
      armed = nullptr;
      dispatch();
    });
  }

  /// Runs every event due now (SimGrid timer callback, in the maestro).
  void dispatch() {
    const Time clock = from_seconds(sg::Engine::get_clock());
    try {
      while (!queue.empty() && queue.top().t_ps <= clock.count_ps() && !error) {
        const Event ev = queue.top();
        queue.pop();
        now = Time::ps(ev.t_ps);
        ++events;
        switch (ev.kind) {
        case Kind::Timer: {
          std::function<void()> fn = std::move(timers[ev.idx]);
          timers[ev.idx] = nullptr;
          free_timers.push_back(ev.idx);
          fn();
          break;
        }
        case Kind::Start:
          start(ev.idx);
          break;
        case Kind::Deliver:
          deliver(ev.idx);
          break;
        }
      }
    } catch (...) {
      error = std::current_exception();
    }
    if (!error) arm();
  }

  std::uint32_t alloc_xfer() {
    if (!free_xfers.empty()) {
      const std::uint32_t i = free_xfers.back();
      free_xfers.pop_back();
      return i;
    }
    xfers.emplace_back();
    return static_cast<std::uint32_t>(xfers.size() - 1);
  }

  void post(const eng::TransferSpec& s, eng::DeliveredFn fn) {
    const std::size_t n = hosts.size();
    if (s.src >= n || s.dst >= n)
      throw InputError("flow engine: send from HCA " + std::to_string(s.src) + " to HCA " +
                       std::to_string(s.dst) + ": only " + std::to_string(n) + " HCAs");
    if (s.src == s.dst)
      throw InputError("flow engine: send from HCA " + std::to_string(s.src) + " to itself");
    const std::uint32_t i = alloc_xfer();
    Xfer& x = xfers[i];
    x.src = s.src;
    x.dst = s.dst;
    x.bytes = s.bytes;
    x.seq = next_seq++;
    x.fn = std::move(fn);
    x.next_in_qp = kNil;
    auto [it, inserted] =
        qp_index.try_emplace(QpKey{s.src, s.dst, s.qp_slot}, static_cast<std::uint32_t>(qps.size()));
    if (inserted) qps.emplace_back();
    x.qp = it->second;
    Qp& q = qps[x.qp];
    if (!q.busy) {
      q.busy = true;
      start(i);
    } else if (q.tail == kNil) {
      q.head = q.tail = i;
    } else {
      xfers[q.tail].next_in_qp = i;
      q.tail = i;
    }
  }

  void start(std::uint32_t i) {
    Xfer& x = xfers[i];
    compute_route(x.src, x.dst, cfg.adaptive_routing, x.route);
    for (const std::uint32_t d : x.route) ++active[d];
    Time extra = cfg.nic_tx_latency + cfg.nic_rx_latency;
    if (cfg.factors) extra += cfg.factors(x.bytes).latency_offset;
    x.comm = sg::Comm::sendto_init(hosts[x.src], hosts[x.dst]);
    x.comm->set_payload_size(x.bytes);
    in_network.emplace(x.comm->get_impl(), i);
    pending_route = &x.route;
    pending_extra_s = to_seconds(extra);
    x.comm->start();
    pending_route = nullptr;
    ++comms;
#if IBN_FLOW_TRIM_MAESTRO_LIST
    if (trim_maestro_list) {
      auto& list = *reinterpret_cast<ActivityList*>(
          static_cast<char*>(_ZN7simgrid6kernel5actor9ActorImpl4selfEv()) + kActorActivitiesOffset);
      if (!list.empty() && list.back().get() == x.comm->get_impl())
        list.pop_back();
      else
        trim_maestro_list = false;
    }
#endif
  }

  /// Link signal (inside SimGrid's model update): a comm changed state. 3.32: NetworkAction derives from
  /// Action alone, so the reference is an Action (the type is incomplete in the public headers).
  void on_comm_state(skres::NetworkAction& na) {
    auto& a = reinterpret_cast<skres::Action&>(na);
    const auto st = a.get_state();
    if (st != skres::Action::State::FINISHED && st != skres::Action::State::FAILED) return;
    const auto it = in_network.find(a.get_activity());
    if (it == in_network.end()) return;
    const std::uint32_t i = it->second;
    in_network.erase(it);
    Xfer& x = xfers[i];
    const Time done = from_seconds(sg::Engine::get_clock());
    for (const std::uint32_t d : x.route) {
      --active[d];
      link_bytes[d] += x.bytes;
    }
    // The QP's next message may go now.
    Qp& q = qps[x.qp];
    if (q.head != kNil) {
      const std::uint32_t nxt = q.head;
      q.head = xfers[nxt].next_in_qp;
      if (q.head == kNil) q.tail = kNil;
      push(done, Kind::Start, nxt, xfers[nxt].seq);
    } else {
      q.busy = false;
    }
    push(done, Kind::Deliver, i, x.seq);
  }

  void deliver(std::uint32_t i) {
    eng::DeliveredFn fn = std::move(xfers[i].fn);
    xfers[i].fn = nullptr;
    // The comm completed in the kernel; nobody waited on it, so tell the s4u object before releasing it
    // (else ~Comm() reports a comm "freed before its completion").
    xfers[i].comm->set_state(sg::Activity::State::FINISHED);
    xfers[i].comm = nullptr;
    free_xfers.push_back(i);
    ++delivered;
    if (fn) fn(now);
  }
};

// ---------------------------------------------------------------------------------------------------------
FlowEngine::FlowEngine(const topo::Fabric& fabric, const routing::RoutingTables& tables, FlowConfig config) {
  config.validate();
  if (tables.num_hcas() == 0) throw InputError("flow engine: the fabric has no HCAs");
  if (g_constructed.exchange(true))
    throw std::logic_error("flow engine: SimGrid's engine is a process-wide singleton and a FlowEngine was "
                           "already constructed in this process; run another flow simulation in a child "
                           "process (flow::run_in_child_process)");
  impl_ = std::make_unique<Impl>(fabric, tables, std::move(config));
  impl_->build();
}

FlowEngine::~FlowEngine() = default;

Time FlowEngine::now() const {
  return impl_->now;
}
std::size_t FlowEngine::num_hcas() const {
  return impl_->hosts.size();
}
const FlowConfig& FlowEngine::config() const {
  return impl_->cfg;
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

void FlowEngine::run() {
  if (impl_->error) std::rethrow_exception(impl_->error);
  impl_->engine->run();
  if (impl_->error) std::rethrow_exception(impl_->error);
}

eng::EngineReport FlowEngine::report() const {
  const Impl& m = *impl_;
  eng::EngineReport r;
  r.engine = "flow";
  r.events = m.events;
  r.transfers = m.delivered;
  const double wire_per_payload = 1.0 / m.cfg.header_efficiency();
  r.links.reserve(m.dlinks.size());
  for (topo::LinkId l = 0; l < m.fabric.num_links(); ++l) {
    const topo::Link& link = m.fabric.link(l);
    for (int dir = 0; dir < 2; ++dir) {
      const topo::NodeId from = dir == 0 ? link.a.node : link.b.node;
      const topo::NodeId to = dir == 0 ? link.b.node : link.a.node;
      eng::LinkRecord rec;
      rec.from_tier = m.fabric.node(from).tier;
      rec.to_tier = m.fabric.node(to).tier;
      rec.capacity_gbps = link.speed.rate_gbps();
      rec.bytes = m.link_bytes[2 * l + dir];
      // Busy = the time the cable spends transmitting those bytes (with headers) at its data rate.
      const auto wire =
          static_cast<std::uint64_t>(std::llround(static_cast<double>(rec.bytes) * wire_per_payload));
      rec.busy = serialization_time(wire, link.rate_bps());
      r.links.push_back(rec);
    }
  }
  r.extra = {{"simgrid_comms", m.comms},
             {"config", m.cfg.to_json()},
             {"simgrid_version", "3.32"},
             {"hosts", m.hosts.size()},
             {"simgrid_links", m.dlinks.size()}};
  return r;
}

std::vector<topo::LinkId> FlowEngine::simgrid_route(routing::HcaIndex src, routing::HcaIndex dst) const {
  std::vector<sg::Link*> links;
  double lat = 0;
  impl_->hosts.at(src)->route_to(impl_->hosts.at(dst), links, &lat);
  std::unordered_map<const sg::Link*, topo::LinkId> id;
  for (std::size_t d = 0; d < impl_->dlinks.size(); ++d)
    id.emplace(impl_->dlinks[d], static_cast<topo::LinkId>(d / 2));
  std::vector<topo::LinkId> out;
  for (const sg::Link* l : links) out.push_back(id.at(l));
  return out;
}

Time FlowEngine::simgrid_route_latency(routing::HcaIndex src, routing::HcaIndex dst) const {
  std::vector<sg::Link*> links;
  double lat = 0;
  impl_->hosts.at(src)->route_to(impl_->hosts.at(dst), links, &lat);
  return from_seconds(lat);
}

// ---------------------------------------------------------------------------------------------------------
std::string run_in_child_process(const std::function<std::string()>& fn) {
  std::fflush(nullptr); // else the child may write the parent's buffered output a second time
  int fds[2];
  if (pipe(fds) != 0)
    throw std::runtime_error(std::string("run_in_child_process: pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(std::string("run_in_child_process: fork: ") + std::strerror(errno));
  }
  if (pid == 0) { // child: first byte 'o' (ok) or 'e' (error), then the text
    close(fds[0]);
    std::string out;
    char tag = 'o';
    try {
      out = fn();
    } catch (const std::exception& e) {
      tag = 'e';
      out = e.what();
    } catch (...) {
      tag = 'e';
      out = "unknown exception";
    }
    std::string msg = tag + out;
    const char* p = msg.data();
    std::size_t left = msg.size();
    while (left > 0) {
      const ssize_t w = write(fds[1], p, left);
      if (w <= 0) break;
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    close(fds[1]);
    _exit(0); // no atexit handlers or static destructors of the parent's copy
  }
  close(fds[1]);
  std::string msg;
  char buf[65536];
  for (;;) {
    const ssize_t r = read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    msg.append(buf, static_cast<std::size_t>(r));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (msg.empty()) {
    const std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exit status " + std::to_string(WEXITSTATUS(status));
    throw std::runtime_error("run_in_child_process: the child produced no result (" + why + ")");
  }
  if (msg[0] == 'e') throw std::runtime_error(msg.substr(1));
  return msg.substr(1);
}

} // namespace ibn::flow
