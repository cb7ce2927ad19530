#pragma once
// FlowEngine's implementation state (private to models/flow): the engine proper in flow_engine.cpp, timed
// faults (links down and up, the SM's reroute, degraded links, QP retry exhaustion) in flow_faults.cpp.
#include "models/common/adaptive.hpp"
#include "models/common/route.hpp"
#include "models/flow/flow_engine.hpp"
#include "models/flow/fluid_network.hpp"
#include "models/flow/paged_ids.hpp"
#include "models/flow/simgrid_network_model.hpp"
#include "models/packet/faults.hpp"
#include "models/routing/reroute.hpp"
#include "sim/error.hpp"
#include "sim/event_queue.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <unordered_set>
#include <vector>

namespace ibn::flow {

namespace sg = simgrid::s4u;
namespace skr = simgrid::kernel::routing;
namespace skres = simgrid::kernel::resource;

namespace detail {

constexpr std::uint32_t kNil = ~std::uint32_t{0};

inline double to_seconds(Time t) {
  return static_cast<double>(t.count_ps()) * 1e-12;
}
inline Time from_seconds(double s) {
  return Time::ps(std::llround(s * 1e12));
}

// --- SimGrid 3.32: starting network actions without s4u ----------------------------------------------
// An s4u host-to-host Comm costs a CommImpl, its s4u twin, a reference in the maestro's activity list
// (std::list, scanned by list::remove when the comm finishes: O(comms in flight) per message) and the
// activity's post/finish machinery. All the flow engine needs is the network action underneath:
// NetworkModel::communicate(src, dst, size, rate), which asks the route (our NetZone), creates the lmm
// variable on the route's links and returns the Action; the model finishes it and SimGrid's link signal
// reports it; the engine loop skips finished actions that have no activity (the owner unrefs them).
// NetworkModel is declared in simgrid_network_model.hpp (3.32's interface; the build is pinned to 3.32).
// Before using it we check that the root zone's model is SimGrid's CM02 model (RTTI of its public
// NetworkModelIntf base: another --cfg=network/model would be another class); the first action returned
// must belong to the model and cost what was asked (else std::logic_error).
struct DirectNetwork {
  skres::NetworkModel* model = nullptr;

  /// Fills `model` and returns "" when the direct path is usable; else why not.
  std::string probe(sg::Engine& engine) {
    sg::NetZone* root = engine.get_netzone_root();
    const skres::NetworkModelIntf* intf = root->get_network_model();
    if (intf == nullptr) return "no network model";
    if (std::strcmp(typeid(*intf).name(), "N7simgrid6kernel8resource16NetworkCm02ModelE") != 0)
      return std::string("network model is ") + typeid(*intf).name() + ", not NetworkCm02Model";
    model = root->get_impl()->get_network_model().get();
    return model == nullptr ? "no network model" : "";
  }
};

struct QpKey {
  std::uint32_t src, dst, qp;
  bool operator==(const QpKey&) const = default;
};
inline std::size_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  return static_cast<std::size_t>(h ^ (h >> 33));
}
struct QpKeyHash {
  std::size_t operator()(const QpKey& k) const {
    return mix(((static_cast<std::uint64_t>(k.src) << 32) | k.dst) ^
               (static_cast<std::uint64_t>(k.qp) << 48));
  }
};
struct PtrHash {
  std::size_t operator()(const void* p) const { return mix(reinterpret_cast<std::uintptr_t>(p)); }
};

/// Open-addressing hash map (linear probing, backward-shift deletion) from a small key to a uint32 value
/// (never kNil): no allocation per entry; the engine inserts and erases one entry per message.
template <typename Key, typename Hash> class FlatMap {
 public:
  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap > slots_.size()) rehash(cap);
  }
  /// The value stored for k, or kNil.
  std::uint32_t find(const Key& k) const {
    if (slots_.empty()) return kNil;
    for (std::size_t i = Hash{}(k)&mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value == kNil) return kNil;
      if (s.key == k) return s.value;
    }
  }
  /// Inserts (k, v) unless k is present; returns the value stored for k and whether it was inserted.
  std::pair<std::uint32_t, bool> try_emplace(const Key& k, std::uint32_t v) {
    if (2 * (size_ + 1) > slots_.size()) rehash(std::max<std::size_t>(16, 2 * slots_.size()));
    for (std::size_t i = Hash{}(k)&mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value == kNil) {
        s.key = k;
        s.value = v;
        ++size_;
        return {v, true};
      }
      if (s.key == k) return {s.value, false};
    }
  }
  std::size_t size() const { return size_; }
  /// Removes k if present.
  void erase(const Key& k) {
    if (slots_.empty()) return;
    std::size_t hole = Hash{}(k)&mask_;
    for (;; hole = (hole + 1) & mask_) {
      if (slots_[hole].value == kNil) return;
      if (slots_[hole].key == k) break;
    }
    // Shift later members of the probe chain back into the hole when their home allows it.
    for (std::size_t j = (hole + 1) & mask_; slots_[j].value != kNil; j = (j + 1) & mask_) {
      const std::size_t home = Hash{}(slots_[j].key) & mask_;
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].value = kNil;
    --size_;
  }

 private:
  struct Slot {
    Key key{};
    std::uint32_t value = kNil;
  };
  void rehash(std::size_t cap) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    size_ = 0;
    for (const Slot& s : old)
      if (s.value != kNil) try_emplace(s.key, s.value);
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

} // namespace detail

using detail::DirectNetwork;
using detail::FlatMap;
using detail::from_seconds;
using detail::kNil;
using detail::PtrHash;
using detail::QpKey;
using detail::QpKeyHash;
using detail::to_seconds;

/// Timed faults (flow_faults.cpp): what FlowEngine::configure_faults set up. Absent (nullptr) in a run
/// without timed faults, which then pays one pointer test per route and per transfer start.
struct FlowFaults {
  enum class What : std::uint8_t { Down, Up, Speed, Sweep, Retry, StallCheck };
  struct Ev { // a pending fault event (Kind::Fault's idx)
    What what = What::Down;
    topo::LinkId link = topo::kNoLink;
    topo::LinkSpeed speed;
    std::uint32_t xfer = 0;    ///< Retry, StallCheck: the transfer
    std::uint64_t seq = 0;     ///< its sequence number (slots are reused)
    std::int64_t since_ps = 0; ///< when its stall began
  };
  pkt::FaultConfig cfg;
  Time ack_timeout;
  int retry_count = 7;
  std::vector<bool> down;        ///< per LinkId
  std::vector<double> rate_gbps; ///< per LinkId: the rate of its last degrade (0: as built); empty: none
  std::vector<std::unique_ptr<routing::Rerouted>> sweeps; ///< the SM's tables, newest last
  std::vector<std::uint32_t> stalled;                     ///< transfers whose route is dead, in stall order
  std::vector<Ev> evs;
  std::uint64_t background = 0; ///< fault events in the queue (they keep no run alive)
  std::vector<pkt::QpFailure> failures;
  pkt::FaultStats stats;
  std::uint64_t stalls = 0, moves = 0; ///< transfers stopped by a dead route; moved to a new route
  bool stopped = false;                ///< a QP exhausted its retries: the run ends
};

// ---------------------------------------------------------------------------------------------------------
struct FlowEngine::Impl {
  enum class Kind : std::uint8_t { Timer, Start, Deliver, Fault };
  struct Xfer {
    std::uint32_t src = 0, dst = 0;
    std::uint64_t bytes = 0;
    std::uint64_t seq = 0;
    std::int64_t delay_ps = 0; ///< end of the bandwidth phase -> delivery (NIC + route latency + offset)
    std::uint32_t qp = kNil;
    std::uint32_t next_in_qp = kNil; ///< FIFO of messages waiting for their QP
    eng::DeliveredFn fn;
    skres::Action* action = nullptr;  ///< network-model path: ours from start to delivery (then unref)
    sg::CommPtr comm;                 ///< s4u path: held from start to delivery
    std::vector<std::uint32_t> route; ///< adaptive routing: this message's directed links
    std::uint64_t payload_left = 0; ///< payload not yet accounted on links (all of it until a fault moves it)
    std::uint64_t wire_acc_left = 0;  ///< the same for wire bytes
    double wire_left = 0;             ///< wire bytes of the next bandwidth phase (what remains after a fault)
    std::int64_t stall_since_ps = -1; ///< timed faults: when its route died without progress since (-1: none)
    std::int64_t void_until_ps = 0;   ///< until when its sender still sends into the dead route (then waits)
    std::int64_t retry_at_ps = -1;    ///< the ACK-timeout retry scheduled for it (-1: none)
    std::uint32_t fid = kNil;         ///< native solver: its FluidNetwork flow while in its bandwidth phase
  };
  struct Qp {
    std::uint32_t src = 0, dst = 0, slot = 0;
    bool busy = false; ///< a message of this QP is in its bandwidth phase
    std::uint32_t head = kNil, tail = kNil;
    std::int64_t last_delivery_ps = 0;
    // Static routing: the route is the QP's; links' byte counters are summed per QP (folded in report()).
    bool has_route = false;
    std::int64_t route_lat_ps = 0;
    std::uint64_t bytes = 0, wire = 0;
    std::vector<std::uint32_t> route;            ///< directed links (2 * LinkId + dir)
    std::vector<skres::StandardLinkImpl*> links; ///< the same, as SimGrid links
  };

  // A NetZone of ours: routes answered on demand from the routing tables (3.32 kernel API).
  class Zone final : public skr::NetZoneImpl {
   public:
    Zone(const std::string& name, Impl* owner) : skr::NetZoneImpl(name), owner_(owner) {}
    void get_local_route(const skr::NetPoint* src, const skr::NetPoint* dst, skr::Route* into,
                         double* latency) override {
      owner_->fill_route(owner_->hca_of_netpoint.at(src->id()), owner_->hca_of_netpoint.at(dst->id()), into,
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
  std::vector<sg::Host*> hosts; ///< per HCA; nullptr for an HCA not declared (FlowEngine's used_hcas)
  std::vector<std::uint32_t> hca_of_netpoint; ///< SimGrid netpoint id -> HcaIndex (hosts are made in order)
  /// Per HCA whether it was declared used; empty: every HCA may send and receive.
  std::vector<bool> declared;
  std::vector<routing::HcaIndex> used; ///< the declared HCAs, sorted, unique (empty without used_hcas)
  bool subset = false;                 ///< only the links the used HCAs' routes can take are made
  const topo::CableDirections* cable_directions = nullptr; ///< the fabric's, when given (FlowEngine)
  std::size_t links_made = 0;
  std::size_t platform_links = 0; ///< directed cables + capped HCAs, made or not (report's simgrid_links)
  /// Per directed link made (id 2 * LinkId + (0: a->b, 1: b->a), or an injection link's id after the
  /// cables'): what starting and ending a flow touch.
  struct DirLink {
    skres::StandardLinkImpl* impl = nullptr; ///< the SimGrid link, kernel side (what a Route holds)
    sg::Link* link = nullptr;                ///< the same, s4u side
    std::int64_t lat_ps = 0;                 ///< latency (prop + fec [+ switch])
    std::uint32_t id = 0;                    ///< its directed id
    std::uint32_t active = 0;                ///< flows in their bandwidth phase (counted with AR only)
    std::uint64_t bytes = 0;                 ///< payload bytes carried (AR; static: per QP)
    std::uint64_t wire = 0;                  ///< wire bytes carried
  };
  /// The directed links made, by directed id (paged_ids.hpp), so that a platform of a few links on a large
  /// fabric costs little. operator[] requires a made link.
  using DirLinks = PagedIds<DirLink>;
  DirLinks dl;
  /// Per HCA: its injection link (an id in dl, after the cables' 2 * num_links) when the HCA rate cap is
  /// below its cable's rate, else kNil. Empty without a cap.
  std::vector<std::uint32_t> injection;
  /// The SimGrid links of the flow being started (nullptr otherwise).
  const std::vector<skres::StandardLinkImpl*>* pending_route = nullptr;
  std::vector<skres::StandardLinkImpl*> ar_links; ///< adaptive routing: the links of the flow being started
  std::uint64_t pending_payload = 0;              ///< its payload bytes (for the factors)
  DirectNetwork direct;
  bool use_direct = false;
  bool direct_checked = false;
  std::string direct_unavailable; ///< why the network-model path is not used ("" when it is)

  std::vector<Xfer> xfers;
  std::vector<std::uint32_t> free_xfers;
  std::vector<std::function<void()>> timers;
  std::vector<std::uint32_t> free_timers;
  std::vector<Qp> qps;
  FlatMap<QpKey, QpKeyHash> qp_index;
  /// In its bandwidth phase: Action* (network-model path) or ActivityImpl* (s4u path) -> xfer.
  FlatMap<const void*, PtrHash> in_network;

  /// Pending events in (time, seq) order (the packet engine's WindowQueue, which pops like a heap; the
  /// (t, seq) key of an Event here is its time and its transfer's or timer's sequence number, target = idx,
  /// tag = kind).
  WindowQueue queue;
  std::uint64_t next_seq = 0;
  Time now;
  simgrid::kernel::timer::Timer* armed = nullptr;
  std::int64_t armed_ps = 0;
  std::exception_ptr error;
  std::uint64_t events = 0, delivered = 0, flows = 0;
  std::unique_ptr<FlowFaults> faults; ///< timed faults (flow_faults.cpp); nullptr without
  // --- the native solver (FlowConfig::Solver::Native) ---
  bool solver_decided = false; ///< at the first send or run()
  bool native = false;         ///< FluidNetwork computes the sharing and the loop is ours (not SimGrid's)
  std::unique_ptr<FluidNetwork> fluid;
  std::vector<std::uint32_t> xfer_of_fid; ///< FluidNetwork flow -> transfer
  std::vector<std::uint32_t> fluid_done, fluid_route;

  /// Whether the native solver can run what this engine was asked so far.
  bool native_possible() const {
    return cfg.solver == FlowConfig::Solver::Native && !faults && !cfg.factors && !cfg.s4u_comms;
  }
  /// Chooses the solver once (the first send or run()): native when possible. The fluid network's links are
  /// the directed links made, in slot order, at their SimGrid bandwidth. (flow_engine.cpp)
  void decide_solver();
  /// The native loop: the earliest of the next completion (first at equal times, as SimGrid finishes actions
  /// before its timers fire) and the next queued event, until neither is left. (flow_engine.cpp)
  void run_native();

  // --- timed faults (flow_faults.cpp) ---
  /// The output port of switch `sw_node` for `dst`: the newest SM sweep's entry, else an older one's (as the
  /// packet engine keeps a switch's old entry for a destination the new tables cannot reach), else the LFT.
  routing::Port swept_next_hop(topo::NodeId sw_node, std::uint32_t dst) const;
  bool dead(std::uint32_t d) const { return d < 2 * fabric.num_links() && faults->down[d / 2]; }
  bool route_dead(const std::vector<std::uint32_t>& route) const;
  /// Transfer i's route has a dead link: it waits (its QP stays busy) until a link up or a sweep revives it.
  void stall(std::uint32_t i);
  /// Takes transfer i out of its bandwidth phase now, keeping its remaining bytes for a later start().
  void suspend(std::uint32_t i);
  void fault_event(std::uint32_t idx);
  /// Wire bytes per second of cable l at `rate_bps` (the bit-error capacity factor applied).
  double link_bandwidth(topo::LinkId l, double rate_bps) const;
  /// Computes the QP's static route (and its latency and SimGrid links) from the current tables.
  void set_qp_route(Qp& q);
  /// Whether transfer i is in its bandwidth phase (it holds an action SimGrid has not finished).
  bool in_bandwidth_phase(std::uint32_t i) const {
    const Xfer& x = xfers[i];
    return x.action != nullptr && in_network.find(x.action) == i;
  }
  /// Queues a fault event at t (Kind::Fault; a background event).
  void fault_at(Time t, const FlowFaults::Ev& ev);
  /// The fault state, made on first use (std::logic_error after the first send; InputError on the s4u path).
  FlowFaults& fault_state();
  void check_link(topo::LinkId l, Time at, const char* what) const;
  /// Adds the fault counters to report().extra.
  void fault_report(nlohmann::json& extra) const;

  Impl(const topo::Fabric& f, const routing::RoutingTables& t, FlowConfig c,
       std::optional<std::vector<routing::HcaIndex>> used_hcas)
      : fabric(f), tables(t), cfg(std::move(c)) {
    if (!used_hcas) return;
    used = std::move(*used_hcas);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    if (!used.empty() && used.back() >= tables.num_hcas())
      throw std::logic_error("flow engine: used HCA " + std::to_string(used.back()) + " of " +
                             std::to_string(tables.num_hcas()));
    declared.assign(tables.num_hcas(), false);
    for (const routing::HcaIndex h : used) declared[h] = true;
  }
  ~Impl() { // the actions of transfers never delivered (a run stopped by an error or a QP failure)
    for (std::uint32_t i = 0; i < xfers.size(); ++i)
      if (skres::Action* a = xfers[i].action) {
        if (in_bandwidth_phase(i)) a->cancel();
        a->unref();
      }
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // --- routes ---
  std::uint32_t directed(topo::LinkId l, topo::NodeId from) const {
    return 2 * l + (fabric.link(l).a.node == from ? 0u : 1u);
  }

  /// The route of src -> dst as directed links (common::walk_route): static (LFT) ports, or with `adaptive`
  /// the least-loaded port of each AR group (common::least_loaded; load = flows in their bandwidth phase on
  /// the link). With an HCA rate cap the source's injection link comes first. Throws InputError when the
  /// tables have no route.
  void compute_route(std::uint32_t src, std::uint32_t dst, bool adaptive,
                     std::vector<std::uint32_t>& out) const {
    out.clear();
    if (!injection.empty() && injection[src] != kNil) out.push_back(injection[src]); // (kNil: cap not below)
    auto visit = [&](const common::Hop& h) { out.push_back(directed(h.link, h.from)); };
    if (adaptive) {
      common::walk_route(
          fabric, tables, src, dst,
          [&](std::uint32_t sw, topo::NodeId sw_node) {
            return common::least_loaded(tables.ar_group(sw_node, dst), [&](routing::Port p) -> std::uint64_t {
              const topo::LinkId l = tables.link_at(sw, p);
              if (l == topo::kNoLink) return ~std::uint64_t{0};
              const std::uint32_t d = directed(l, sw_node);
              if (!dl.made(d)) require_made(src, dst, {d});
              return faults && dead(d) ? ~std::uint64_t{0}
                                       : dl[d].active; // a dead port: never while a live one
            });
          },
          visit);
    } else {
      common::walk_route(
          fabric, tables, src, dst,
          [&](std::uint32_t sw, topo::NodeId sw_node) {
            return faults && !faults->sweeps.empty() ? swept_next_hop(sw_node, dst)
                                                     : tables.next_hop_by_index(sw, dst);
          },
          visit);
    }
    if (subset) require_made(src, dst, out);
  }

  /// A route onto a link the platform does not hold (an HCA pair or AR port the subset missed) is a bug of
  /// ours, never a silent mis-simulation: std::logic_error.
  void require_made(std::uint32_t src, std::uint32_t dst, const std::vector<std::uint32_t>& route) const {
    for (const std::uint32_t d : route)
      if (!dl.made(d))
        throw std::logic_error("flow engine: the route from HCA " + std::to_string(src) + " to HCA " +
                               std::to_string(dst) + " takes directed link " + std::to_string(d) +
                               ", which the platform built for the used HCAs does not hold");
  }

  /// The SimGrid host of HCA h (std::logic_error when h was not declared used).
  sg::Host* host_of(std::uint32_t h) const {
    if (h >= hosts.size()) throw std::logic_error("flow engine: no HCA " + std::to_string(h));
    if (hosts[h] == nullptr)
      throw std::logic_error("flow engine: HCA " + std::to_string(h) +
                             " was not declared among the used HCAs the platform was built for");
    return hosts[h];
  }

  /// Every cable direction (directed id) a message between two used HCAs can take, sorted:
  /// per destination, every switch reached from the sources' switches through the static port, or with
  /// adaptive routing through every port of the AR group (what compute_route may choose), and the HCAs' own
  /// cables. A switch is expanded once per destination: the walk costs at most the links per destination.
  std::vector<std::uint32_t> needed_links() const; // (flow_engine.cpp)

  /// Our NetZone's answer. While a flow is being started: its route, no latency (the engine adds the
  /// latency after the bandwidth phase; see flow_engine.hpp). Otherwise (Host::route_to): the static route
  /// and its latency.
  void fill_route(std::uint32_t src, std::uint32_t dst, skr::Route* into, double* latency) {
    if (pending_route != nullptr) {
      into->link_list_.insert(into->link_list_.end(), pending_route->begin(), pending_route->end());
      return;
    }
    std::vector<std::uint32_t> tmp;
    compute_route(src, dst, false, tmp);
    for (const std::uint32_t d : tmp) { // (made: compute_route checks)
      into->link_list_.push_back(dl[d].impl);
      if (latency != nullptr) *latency += to_seconds(Time::ps(dl[d].lat_ps));
    }
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
    // With used HCAs declared: their hosts only, and the links their routes can take, when walking those
    // routes (at most the switches per destination) costs less than making every link.
    subset = !declared.empty() &&
             used.size() * tables.switch_nodes().size() <= 4 * static_cast<std::size_t>(fabric.num_links());
    hosts.assign(n, nullptr);
    std::vector<std::uint32_t> all; // every HCA when none were declared
    if (declared.empty()) {
      all.resize(n);
      for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::uint32_t>(i);
    }
    for (const std::uint32_t i : declared.empty() ? all : used) {
      sg::Host* h = z->create_host("h" + std::to_string(i), 1.0);
      if (h->get_netpoint()->id() != hca_of_netpoint.size())
        throw std::logic_error("flow engine: unexpected SimGrid host numbering");
      hca_of_netpoint.push_back(static_cast<std::uint32_t>(i));
      hosts[i] = h->seal();
    }
    std::vector<std::uint32_t> need; // the directed ids to make, in order
    if (subset) {
      need = needed_links();
    } else {
      need.resize(2 * static_cast<std::size_t>(fabric.num_links()));
      for (std::size_t d = 0; d < need.size(); ++d) need[d] = static_cast<std::uint32_t>(d);
    }
    dl.add_ids(2 * static_cast<std::size_t>(fabric.num_links()));
    for (const std::uint32_t d : need) {
      const topo::LinkId l = d / 2;
      const topo::Link& link = fabric.link(l);
      const topo::NodeId from = d % 2 == 0 ? link.a.node : link.b.node;
      const Time lat = cfg.link_latency(link, fabric.node(from)); // + the switch's own model latency
      sg::Link* sl = z->create_link("l" + std::to_string(l) + (d % 2 == 0 ? "+" : "-"),
                                    link_bandwidth(l, static_cast<double>(link.rate_bps())));
      sl->set_latency(to_seconds(lat)); // what Host::route_to reports; flows get no SimGrid latency
      DirLink& dlk = dl.make(d);
      dlk.id = d;
      dlk.link = sl->seal();
      dlk.impl = dlk.link->get_impl();
      dlk.lat_ps = lat.count_ps();
      ++links_made;
    }
    platform_links = dl.ids();
    // HCA injection cap (DeviceKnobs::hca_rate_gbps; the packet engine paces the HCA's transmitter): one more
    // SimGrid link per capped HCA at the cap's rate, shared by all its flows, first on each of its routes.
    // The host path (PCIe, staging, cross-NUMA, SR-IOV) lowers the same rate (DeviceKnobs::injection_gbps).
    if (cfg.hca_rate_gbps > 0 || cfg.host_caps_rate()) {
      injection.assign(n, kNil);
      for (std::size_t i = 0; i < n; ++i) {
        const topo::LinkId l = tables.hca_link(static_cast<routing::HcaIndex>(i));
        if (l == topo::kNoLink) continue;
        const double link_gbps = fabric.link(l).speed.rate_gbps();
        const double cap_gbps = cfg.injection_gbps(link_gbps, 1.0 / cfg.header_efficiency());
        if (cap_gbps >= link_gbps) continue;
        ++platform_links;
        if (hosts[i] == nullptr) continue; // not used: not made
        sg::Link* sl = z->create_link("cap" + std::to_string(i), cap_gbps * 1e9 / 8.0);
        injection[i] = dl.ids();
        dl.add_ids(1);
        DirLink& dlk = dl.make(injection[i]);
        dlk.id = injection[i];
        dlk.link = sl->seal();
        dlk.impl = dlk.link->get_impl();
        ++links_made;
      }
    }
    in_network.reserve(2 * hca_of_netpoint.size());
    qp_index.reserve(2 * hca_of_netpoint.size());
    z->seal();
    engine->seal_platform();

    if (cfg.factors) {
      auto* model = engine->get_netzone_root()->get_network_model();
      model->set_bw_factor_cb([this](double size, const sg::Host*, const sg::Host*,
                                     const std::vector<sg::Link*>&, const std::unordered_set<sg::NetZone*>&) {
        const auto payload = pending_route != nullptr ? pending_payload : static_cast<std::uint64_t>(size);
        return cfg.factors(payload).bw_factor;
      });
    }
    direct_unavailable = cfg.s4u_comms ? "forced by FlowConfig::s4u_comms" : direct.probe(*engine);
    use_direct = direct_unavailable.empty();
    sg::Link::on_communication_state_change_cb(
        [this](skres::NetworkAction& na, skres::Action::State) { on_flow_state(na); });
  }

  // --- events ---
  void push(Time t, Kind kind, std::uint32_t idx, std::uint64_t seq) {
    queue.push(ibn::Event{t, seq, idx, static_cast<EventTag>(kind)});
    arm();
  }

  /// Keeps one SimGrid timer at the earliest pending event.
  void arm() {
    if (queue.empty() || error || native) return;
    if (faults && (faults->stopped || (queue.size() == faults->background && in_network.size() == 0 &&
                                       faults->stalled.empty()))) {
      if (armed != nullptr) armed->remove(); // fault events alone keep no run alive (as in the packet engine)
      armed = nullptr;
      return;
    }
    const std::int64_t head = queue.top().time.count_ps();
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
    try {
      dispatch_due(from_seconds(sg::Engine::get_clock()).count_ps());
    } catch (...) {
      error = std::current_exception();
    }
    if (!error) arm();
  }
  /// Runs every queued event due at or before `clock_ps`, in (time, sequence) order.
  void dispatch_due(std::int64_t clock_ps) {
    while (!queue.empty() && queue.top().time.count_ps() <= clock_ps && !error && !(faults && faults->stopped)) {
      const ibn::Event ev = queue.pop();
      now = ev.time;
      ++events;
      switch (static_cast<Kind>(ev.tag)) {
      case Kind::Timer: {
        std::function<void()> fn = std::move(timers[ev.target]);
        timers[ev.target] = nullptr;
        free_timers.push_back(ev.target);
        fn();
        break;
      }
      case Kind::Start:
        start(ev.target);
        break;
      case Kind::Deliver:
        deliver(ev.target);
        break;
      case Kind::Fault:
        --faults->background;
        fault_event(ev.target);
        break;
      }
    }
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
    if (!declared.empty() && (!declared[s.src] || !declared[s.dst]))
      throw std::logic_error("flow engine: send from HCA " + std::to_string(s.src) + " to HCA " +
                             std::to_string(s.dst) + ": not among the used HCAs the platform was built for");
    decide_solver();
    const std::uint32_t i = alloc_xfer();
    Xfer& x = xfers[i];
    x.src = s.src;
    x.dst = s.dst;
    x.bytes = s.bytes;
    x.payload_left = s.bytes;
    x.wire_acc_left = cfg.wire_bytes(s.bytes);
    x.wire_left = static_cast<double>(x.wire_acc_left);
    x.stall_since_ps = -1;
    x.void_until_ps = 0;
    x.retry_at_ps = -1;
    x.seq = next_seq++;
    x.fn = std::move(fn);
    x.next_in_qp = kNil;
    const auto [qp, inserted] =
        qp_index.try_emplace(QpKey{s.src, s.dst, s.qp_slot}, static_cast<std::uint32_t>(qps.size()));
    if (inserted) {
      qps.emplace_back();
      qps.back().src = s.src, qps.back().dst = s.dst, qps.back().slot = s.qp_slot;
    }
    x.qp = qp;
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

  /// Starts the bandwidth phase of message i (now).
  void start(std::uint32_t i) {
    Xfer& x = xfers[i];
    std::int64_t lat = 0;
    if (cfg.adaptive_routing) { // chosen now, by the flows on the links now
      compute_route(x.src, x.dst, true, x.route);
      if (faults && route_dead(x.route)) return stall(i);
      ar_links.clear();
      for (const std::uint32_t d : x.route) {
        ++dl[d].active;
        lat += dl[d].lat_ps;
        ar_links.push_back(dl[d].impl);
      }
      pending_route = &ar_links;
    } else { // the QP's static route, computed once
      Qp& q = qps[x.qp];
      if (!q.has_route) set_qp_route(q);
      if (faults && route_dead(q.route)) return stall(i);
      lat = q.route_lat_ps;
      pending_route = &q.links;
    }
    Time delay = cfg.tx_latency() + cfg.nic_rx_latency + Time::ps(lat);
    if (cfg.factors) delay += cfg.factors(x.bytes).latency_offset;
    x.delay_ps = delay.count_ps();
    const double wire = x.wire_left;
    x.stall_since_ps = -1; // moving again: the QP's retry count starts over
    pending_payload = x.bytes;
    if (native) {
      pending_route = nullptr;
      fluid_route.clear();
      for (const std::uint32_t d : cfg.adaptive_routing ? x.route : qps[x.qp].route)
        fluid_route.push_back(dl.slot(d));
      const std::uint32_t fid = fluid->start(fluid_route, wire, now.count_ps());
      if (fid >= xfer_of_fid.size()) xfer_of_fid.resize(std::size_t{fid} + 1, kNil);
      xfer_of_fid[fid] = i;
      x.fid = fid;
    } else if (use_direct) {
      skres::Action* a = direct.model->communicate(hosts[x.src], hosts[x.dst], wire, -1.0);
      pending_route = nullptr;
      if (!direct_checked) {
        if (a == nullptr || a->get_model() != static_cast<skres::Model*>(direct.model) ||
            a->get_cost() != wire || a->get_state() != skres::Action::State::STARTED)
          throw std::logic_error("flow engine: SimGrid's NetworkModel::communicate did not return the "
                                 "expected action (SimGrid build differs from 3.32's, see "
                                 "models/flow/simgrid_network_model.hpp); use FlowConfig::s4u_comms");
        direct_checked = true;
      }
      x.action = a;
      in_network.try_emplace(a, i);
      if (faults) arm(); // pending fault events count from now (a flow in its bandwidth phase)
    } else {
      x.comm = sg::Comm::sendto_init(hosts[x.src], hosts[x.dst]);
      x.comm->set_payload_size(static_cast<std::uint64_t>(wire));
      in_network.try_emplace(x.comm->get_impl(), i);
      x.comm->start();
      pending_route = nullptr;
    }
    ++flows;
  }

  /// Accounts `payload` and `wire` bytes of transfer i on its route (AR: its links, whose active count drops;
  /// static: its QP's counters) and takes them off what it has left.
  void account_left(std::uint32_t i, std::uint64_t payload, std::uint64_t wire) {
    Xfer& x = xfers[i];
    if (cfg.adaptive_routing) {
      for (const std::uint32_t d : x.route) {
        DirLink& l = dl[d];
        --l.active;
        l.bytes += payload;
        l.wire += wire;
      }
    } else {
      qps[x.qp].bytes += payload;
      qps[x.qp].wire += wire;
    }
    x.payload_left -= payload;
    x.wire_acc_left -= wire;
  }

  /// Link signal (inside SimGrid's model update, where nothing may be started): a flow changed state.
  void on_flow_state(skres::NetworkAction& na) {
    skres::Action& a = na; // NetworkAction : Action (simgrid_network_model.hpp)
    const auto st = a.get_state();
    if (st != skres::Action::State::FINISHED && st != skres::Action::State::FAILED) return;
    const void* key = use_direct ? static_cast<const void*>(&a) : static_cast<const void*>(a.get_activity());
    const std::uint32_t i = in_network.find(key);
    if (i == kNil) return;
    in_network.erase(key);
    Xfer& x = xfers[i];
    // A finished action keeps its lmm variable, and so its share of the links, until it is destroyed, which
    // may not happen inside the model update: take it out of the sharing now (as SimGrid itself changes a
    // variable's penalty in this loop when a latency phase ends), destroy it at delivery.
    if (x.action != nullptr) x.action->set_sharing_penalty(0.0);
    finished(i, from_seconds(sg::Engine::get_clock()));
  }

  /// Transfer i ended its bandwidth phase at `done`: its bytes are accounted, its QP's next message starts,
  /// its delivery is queued.
  void finished(std::uint32_t i, Time done) {
    Xfer& x = xfers[i];
    Qp& q = qps[x.qp];
    account_left(i, x.payload_left, x.wire_acc_left);
    // The QP's next message starts its bandwidth phase now (an RC QP pipelines its messages).
    if (q.head != kNil) {
      const std::uint32_t nxt = q.head;
      q.head = xfers[nxt].next_in_qp;
      if (q.head == kNil) q.tail = kNil;
      push(done, Kind::Start, nxt, xfers[nxt].seq);
    } else {
      q.busy = false;
    }
    // Delivered a fixed delay later, in QP order (with AR a later message may take a shorter route).
    const std::int64_t at = std::max(done.count_ps() + x.delay_ps, q.last_delivery_ps);
    q.last_delivery_ps = at;
    push(Time::ps(at), Kind::Deliver, i, x.seq);
  }

  void deliver(std::uint32_t i) {
    Xfer& x = xfers[i];
    eng::DeliveredFn fn = std::move(x.fn);
    x.fn = nullptr;
    if (x.action != nullptr) {
      x.action->unref(); // finished and taken off the model's sets by SimGrid's loop; nobody else holds it
      x.action = nullptr;
    }
    if (x.comm) {
      // The comm completed in the kernel; nobody waited on it, so tell the s4u object before releasing it
      // (else ~Comm() reports a comm "freed before its completion").
      x.comm->set_state(sg::Activity::State::FINISHED);
      x.comm = nullptr;
    }
    free_xfers.push_back(i);
    ++delivered;
    if (fn) fn(now);
  }
};

} // namespace ibn::flow
