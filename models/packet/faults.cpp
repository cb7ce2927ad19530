// Faults (faults.hpp): cables going down and up, the subnet manager's reroute, QPs that exhaust their
// retries, degraded link rates. Nothing here runs until a fault is configured; the hot path's only hook is
// the Tx::down test in Core::kick.
#include "models/packet/faults.hpp"

#include "models/packet/core.hpp"
#include "models/packet/fault_state.hpp"
#include "models/routing/reroute.hpp"
#include "sim/error.hpp"

#include <array>
#include <queue>
#include <stdexcept>
#include <tuple>

namespace ibn::pkt {

Time ib_ack_timeout(int timeout_exp) {
  if (timeout_exp < 0 || timeout_exp > 31) throw InputError("IB timeout exponent must be 0..31");
  return Time::ps(std::int64_t{4'096'000} << timeout_exp); // 4.096 us x 2^timeout
}

namespace detail {

/// The fault timeline: link state changes and SM sweeps, one pending (Background) event for the earliest.
/// Background: pending faults neither keep a finished run alive nor hide a deadlock.
struct FaultTimer final : Component {
  enum class What : std::uint8_t { Down, Up, Sweep };
  struct Item {
    Time t;
    std::uint64_t seq;
    What what;
    topo::LinkId link;
    bool operator>(const Item& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
  };
  FaultTimer(Core& core) : Component(core.sim, "faults", HandlerKind::Background), core(core) {}
  void add(Time t, What w, topo::LinkId l) {
    const bool earlier = heap.empty() || t < heap.top().t;
    heap.push({t, seq++, w, l});
    if (earlier) {
      if (pending.valid()) sim().cancel(pending);
      pending = schedule_at(t);
    }
  }
  void on_event(EventTag) override {
    pending = EventHandle{};
    while (!heap.empty() && heap.top().t <= now()) {
      const Item it = heap.top();
      heap.pop();
      if (it.what == What::Sweep)
        core.sm_sweep();
      else
        core.link_change(it.link, it.what == What::Up);
    }
    if (!heap.empty()) pending = schedule_at(heap.top().t);
  }
  void clear() {
    if (pending.valid()) sim().cancel(pending);
    pending = EventHandle{};
    heap = {};
  }
  Core& core;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  std::uint64_t seq = 0;
  EventHandle pending;
};

Core::~Core() = default;

/// The fault records alone (a QP can fail without any fault configured: bit errors, a credit stall).
static FaultState& fault_storage(std::unique_ptr<FaultState>& faults) {
  if (!faults) faults = std::make_unique<FaultState>();
  return *faults;
}

FaultState& Core::fault_state() {
  if (faults && faults->armed) return *faults;
  if (stats.packet_hops != 0 || pool.in_flight() != 0)
    throw std::logic_error("faults must be configured before the first packet is sent");
  fault_storage(faults).armed = true;
  // The Fast event model's incoming lists route a packet at the next switch when it is sent and skip its
  // arrival: a dead cable or a new LFT could not reach it. Faulted runs use the Plain event model.
  incoming_shortcut = false;
  direct_start = false;
  hca_quiet = false;
  faults->down.assign(fabric.num_links(), false);
  faults->link_tx.assign(fabric.num_links(), {kNil, kNil});
  materialise_all(); // a faulted run makes every port (cables go down and up under packets in flight)
  for (const Tx* t : txs) {
    auto& slot = faults->link_tx[t->link];
    slot[slot[0] == kNil ? 0 : 1] = t->index;
  }
  faults->timer = &sim.make<FaultTimer>(*this);
  return *faults;
}

/// A dead output drops everything it would send: a switch output its queued packets (their input buffer
/// space goes back upstream, as when a packet leaves), an HCA what its QPs would send now (they count it as
/// sent; the ACK timeout and go-back-N recover, or the retries run out). Nothing uses the dead cable's
/// credits, so they are whole again when it comes up (link training re-initialises them in IB too).
void Core::drain_dead(Tx& tx) {
  auto drop = [&](std::uint32_t pi) {
    tx.dropped++;
    faults->stats.dropped_packets++;
    pool.release(pi);
  };
  if (tx.owner_is_switch) {
    const Switch& sw = switches[tx.owner];
    for (int vl = 0; vl < cfg.num_vls; ++vl)
      for (int in = 0; in < tx.radix; ++in) {
        Fifo& f = tx.voq[static_cast<std::size_t>(vl) * static_cast<std::size_t>(tx.radix) +
                         static_cast<std::size_t>(in)];
        while (!f.empty()) {
          const std::uint32_t pi = pool.pop(f);
          const Packet& p = pool[pi];
          tx.queued_bytes -= p.wire;
          tx.queued_packets--;
          push_credits(*txs[sw.up_tx[static_cast<std::size_t>(p.in_port - 1)]], p.in_vl, p.wire);
          if (pfc_on) pfc_left(*txs[sw.up_tx[static_cast<std::size_t>(p.in_port - 1)]], p.in_vl, p.wire);
          drop(pi);
        }
      }
    std::fill(tx.nonempty_store.begin(), tx.nonempty_store.end(), 0);
  } else {
    for (std::uint32_t pi = select_hca(tx); pi != kNil; pi = select_hca(tx)) drop(pi);
  }
  if (tx.stalled) {
    tx.stats.credit_stall += sim.now() - tx.stall_since;
    tx.stalled = false;
  }
  tx.waiting = false;
}

void Core::link_change(topo::LinkId l, bool up) {
  FaultState& fs = *faults;
  if (fs.down[l] == !up) return; // no change
  fs.down[l] = !up;
  (up ? fs.stats.link_ups : fs.stats.link_downs)++;
  for (const std::uint32_t t : fs.link_tx[l]) {
    if (t == kNil) continue;
    Tx& tx = *txs[t];
    tx.down = !up;
    if (!up) // what is on the cable now is lost: dropped (and counted) when it reaches the peer
      for (std::size_t i = 0; i < tx.wire.size(); ++i) {
        Packet& p = pool[tx.wire.at(i).a];
        p.corrupted = true;
        p.flags |= kFlagLost;
      }
  }
  for (const std::uint32_t t : fs.link_tx[l])
    if (t != kNil) kick(*txs[t]);
  if (up)
    for (const std::uint32_t t : fs.link_tx[l]) // an HCA port that comes back resumes its QPs
      if (t != kNil && !txs[t]->owner_is_switch) hca_wake(txs[t]->owner);
  if (fs.cfg.reroute) fs.timer->add(sim.now() + fs.cfg.sm_sweep_delay, FaultTimer::What::Sweep, l);
}

/// The subnet manager's heavy sweep: the same algorithm on the fabric without the dead switch-to-switch
/// cables, its LFTs resolved to transmitters and swapped in at once. A destination the new tables cannot
/// reach from a switch keeps that switch's old entry (its packets are dropped at the dead port). An HCA's
/// cable is never removed: the HCA has no other path, and tree algorithms refuse an HCA without a cable.
void Core::sm_sweep() {
  FaultState& fs = *faults;
  std::vector<bool> failed(fabric.num_links(), false);
  for (topo::LinkId l = 0; l < fabric.num_links(); ++l) {
    if (!fs.down[l]) continue;
    const topo::Link& k = fabric.link(l);
    failed[l] = switch_of_node[k.a.node] != kNil && switch_of_node[k.b.node] != kNil;
  }
  const routing::Rerouted r = routing::reroute(fabric, failed, tables.algorithm(), fs.cfg.routing_options);
  std::vector<std::uint32_t> lft = lft_tx;
  const std::size_t nh = lft_stride;
  for (std::size_t s = 0; s < switches.size(); ++s)
    for (HcaIndex d = 0; d < nh; ++d) {
      const routing::Port out = r.tables.next_hop(switches[s].node, d);
      if (out != routing::kNoPort && switches[s].tx_of_port[out - 1] != kNil)
        lft[s * nh + d] = switches[s].tx_of_port[out - 1];
    }
  lft_tx = std::move(lft);
  fs.stats.reroutes++;
}

void Core::qp_error(std::uint32_t q) {
  Qp& qp = qps[q];
  qp.failed = true;
  set_rto(qp, Time::max());
  QpFailure f{qp.src, qp.dst, qp.slot, sim.now(), {}};
  for (const std::uint32_t id : qp.sendq) {
    Msg& m = msgs[id];
    if (m.rec.is_acked) continue;
    m.rec.is_failed = true;
    m.rec.failed = sim.now();
    f.messages.push_back(id);
  }
  qp.sendq.clear();
  qp.send_pos = 0;
  qp.send_off = 0;
  qp.send_changed();
  fault_storage(faults);
  faults->failures.push_back(std::move(f));
  faults->stats.qp_errors++;
  sim.request_stop(); // the run ends: a failed QP is an error the caller must see, not a hang
}

void Core::count_lost(Tx& from, const Packet& p) {
  if (p.flags & kFlagLost) {
    from.dropped++;
    faults->stats.dropped_packets++;
  } else {
    stats.packets_corrupted++;
  }
}

void Core::set_rate(Tx& tx, std::uint64_t rate_bps) {
  tx.rate_bps = rate_bps;
  tx.ps_per_byte = 8'000'000'000'000ull % rate_bps == 0 ? 8'000'000'000'000ull / rate_bps : 0;
  tx.carry = 0;
  if (cc_dcqcn) {
    const double scale =
        cfg.dcqcn.scale_ref_gbps > 0 ? static_cast<double>(rate_bps) / (cfg.dcqcn.scale_ref_gbps * 1e9) : 1.0;
    tx.ecn_kmin = static_cast<std::uint64_t>(cfg.dcqcn.kmin_bytes * scale);
    tx.ecn_kmax = static_cast<std::uint64_t>(cfg.dcqcn.kmax_bytes * scale);
  }
}

} // namespace detail

// ---------------------------------------------------------------- PacketNetwork's fault API
namespace {
void check_link(const detail::Core& c, topo::LinkId l, const char* what) {
  if (l >= c.fabric.num_links())
    throw InputError(std::string(what) + ": unknown link " + std::to_string(l) + " (the fabric has " +
                     std::to_string(c.fabric.num_links()) + ")");
}
} // namespace

void PacketNetwork::configure_faults(const FaultConfig& cfg) {
  detail::Core& c = *impl_;
  if (cfg.sm_sweep_delay < Time::zero()) throw InputError("faults: sm_sweep_delay must be >= 0");
  if (cfg.reroute && c.lft_tx.empty())
    throw InputError("faults: reroute needs static routing with the dense LFT (adaptive routing is on, or "
                     "the fabric is too large for it); set reroute off");
  c.fault_state().cfg = cfg;
}

void PacketNetwork::schedule_link_down(topo::LinkId link, Time at) {
  detail::Core& c = *impl_;
  check_link(c, link, "link down");
  if (at < c.sim.now()) throw std::logic_error("schedule_link_down in the past");
  auto& fs = c.fault_state();
  if (fs.cfg.reroute && c.lft_tx.empty())
    throw InputError(
        "faults: reroute needs static routing with the dense LFT; configure_faults(reroute off)");
  fs.timer->add(at, detail::FaultTimer::What::Down, link);
}

void PacketNetwork::cancel_pending_faults() {
  if (impl_->faults && impl_->faults->timer) impl_->faults->timer->clear();
}

void PacketNetwork::schedule_link_up(topo::LinkId link, Time at) {
  detail::Core& c = *impl_;
  check_link(c, link, "link up");
  if (at < c.sim.now()) throw std::logic_error("schedule_link_up in the past");
  c.fault_state().timer->add(at, detail::FaultTimer::What::Up, link);
}

void PacketNetwork::schedule_node_down(topo::NodeId node, Time at) {
  if (node >= impl_->fabric.num_nodes()) throw InputError("node down: unknown node " + std::to_string(node));
  for (const topo::LinkId l : impl_->fabric.links_of(node)) schedule_link_down(l, at);
}

void PacketNetwork::schedule_node_up(topo::NodeId node, Time at) {
  if (node >= impl_->fabric.num_nodes()) throw InputError("node up: unknown node " + std::to_string(node));
  for (const topo::LinkId l : impl_->fabric.links_of(node)) schedule_link_up(l, at);
}

void PacketNetwork::set_link_speed(topo::LinkId link, topo::LinkSpeed speed) {
  detail::Core& c = *impl_;
  check_link(c, link, "link speed");
  if (speed.rate_bps() == 0) throw InputError("link speed: rate 0 for link " + std::to_string(link));
  for (std::uint32_t k = 0; k < c.site_link.size(); ++k)
    if (c.site_link[k] == link) {
      c.set_rate(c.tx_at(2 * k), speed.rate_bps());
      c.set_rate(c.tx_at(2 * k + 1), speed.rate_bps());
    }
}

bool PacketNetwork::link_up(topo::LinkId link) const {
  return !impl_->faults || link >= impl_->faults->down.size() || !impl_->faults->down[link];
}

const std::vector<QpFailure>& PacketNetwork::qp_failures() const {
  static const std::vector<QpFailure> none;
  return impl_->faults ? impl_->faults->failures : none;
}

FaultStats PacketNetwork::fault_stats() const {
  return impl_->faults ? impl_->faults->stats : FaultStats{};
}

} // namespace ibn::pkt
