#pragma once
// detail::Core: the state behind PacketNetwork and the glue between its components. Internal to
// models/packet/; what each part does lives in its own file:
//   delay_line.hpp      the delay line (cable wire, credit returns, incoming lists, completions)
//   packet.hpp          packets, FIFOs, the packet pool
//   port.hpp, port.cpp  a transmitter (Tx): serialization, credits, the transmit path
//   switch_port.hpp     VOQs and the VL arbiter of a switch output;  adaptive_routing.hpp  the AR policy
//   switch.cpp          packets arriving at a switch, routing, enqueueing, congestion marking
//   transport.hpp       the RC QP state machine;  hca.cpp  the HCA: what it sends next, what it receives
//   cc_points.cpp       congestion control reaction and notification points (DCQCN, IB CC)
//   pfc.cpp             PFC pause/resume
//   event_model.hpp/.cpp  the Fast event model's shortcuts, their invariants and the checked mode
//   diagnostics.cpp     deadlock wait-for edges, queue sampling, port statistics
//   build.cpp           building the model from a Fabric
#include "models/packet/adaptive_routing.hpp"
#include "models/packet/network.hpp"
#include "models/packet/packet.hpp"
#include "models/packet/port.hpp"
#include "models/packet/switch_port.hpp"
#include "models/packet/transport.hpp"
#include "sim/simulation.hpp"

#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

namespace ibn::pkt::detail {

using Qp = RcQp;

struct FaultState; // faults.cpp

struct Core {
  // ---------------------------------------------------------------- helper components
  /// Completion notifications (constant nic_rx delay): a delay line with one pending event for its head.
  struct NotifyLine final : Component {
    NotifyLine(Core& core, std::string name) : Component(core.sim, std::move(name)), core(core) {}
    void push(Time t, std::uint32_t a, std::uint32_t b) {
      items.push_back({t, a, b});
      if (items.size() == 1) schedule_at(t);
    }
    void on_event(EventTag) override {
      while (!items.empty() && items.front().t <= now()) {
        const LineItem it = items.front();
        items.pop_front();
        core.notify_deliver(it);
      }
      if (!items.empty()) schedule_at(items.front().t);
    }
    Core& core;
    DelayLine items;
  };

  /// Queue sampler (Background): records every output's queued bytes each `period`.
  struct Sampler final : Component {
    Sampler(Core& core, Time period)
        : Component(core.sim, "queue sampler", HandlerKind::Background), core(core), period(period) {
      schedule_at(Time::zero());
    }
    void on_event(EventTag) override {
      core.sample_queues();
      schedule_in(period);
    }
    Core& core;
    Time period;
  };

  /// HCA timer: wakes the HCA when a posted message becomes eligible, a pacing gap ends or an ACK timeout
  /// expires. At most one pending event.
  struct HcaTimer final : Component {
    HcaTimer(Core& core, HcaIndex h, std::string name)
        : Component(core.sim, std::move(name)), core(core), h(h) {}
    void on_event(EventTag) override {
      pending = EventHandle{};
      core.hca_wake(h);
    }
    void request(Time t) {
      if (pending.valid() && pending.time <= t && sim().is_pending(pending)) return;
      // The wake-up cancelled last, still queued and due no later: take it back (an ACK timer is cancelled
      // whenever an HCA's last QP is acknowledged and wanted again at its next packet; a new entry each
      // time would leave one cancelled entry per cancellation queued until its time, seconds ahead).
      if (!pending.valid() && parked.valid() && parked.time <= t && sim().restore(parked)) {
        pending = parked;
        parked = EventHandle{};
        return;
      }
      if (pending.valid()) sim().cancel(pending);
      pending = schedule_at(std::max(t, now()));
    }
    /// Drops the pending wake-up, if any.
    void cancel() {
      if (pending.valid() && sim().is_pending(pending)) {
        sim().cancel(pending);
        parked = pending;
      }
      pending = EventHandle{};
    }
    Core& core;
    HcaIndex h;
    EventHandle pending;
    EventHandle parked; ///< the wake-up cancel() dropped, which request() may take back
  };

  /// Deferred posts (post_at): a min-heap with one pending event.
  struct Poster final : Component {
    explicit Poster(Core& core) : Component(core.sim, "poster"), core(core) {}
    struct Item {
      Time t;
      std::uint64_t seq;
      MessageSpec spec;
      bool operator>(const Item& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
    };
    void add(Time t, const MessageSpec& s) {
      const bool earlier = heap.empty() || t < heap.top().t;
      heap.push({t, seq++, s});
      if (earlier) {
        if (pending.valid()) sim().cancel(pending);
        pending = schedule_at(t);
      }
    }
    void on_event(EventTag) override {
      pending = EventHandle{};
      while (!heap.empty() && heap.top().t <= now()) {
        const MessageSpec s = heap.top().spec;
        heap.pop();
        core.post_now(s);
      }
      if (!heap.empty()) pending = schedule_at(heap.top().t);
    }
    Core& core;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    std::uint64_t seq = 0;
    EventHandle pending;
  };

  struct Hca {
    topo::NodeId node = topo::kNoNode;
    std::uint32_t tx = kNil;
    std::vector<std::uint32_t> active; ///< (qp << 1) | responder-role
    std::size_t rr = 0;
    Fifo ctrl;                          ///< ACK/NAK/CNP packets, sent before data
    std::vector<std::uint32_t> req_qps; ///< QPs this HCA is the requester of
    HcaTimer* timer = nullptr;          ///< ACK timeouts (made on first use: timer_of)
    /// Requester QPs with an ACK deadline (Qp::rto_deadline before Time::max()); at 0 the timer is cancelled,
    /// so that no wake-up of an acknowledged message keeps the clock running past the traffic (set_rto).
    std::uint32_t timed_qps = 0;
    /// Wake-ups for sending (a posted message becomes eligible, a pacing gap or the injection cap ends): a
    /// separate timer, so that a wake-up per paced packet does not cancel and re-arm the far-off ACK timeout.
    /// Made on first use (pacer_of).
    HcaTimer* pacer = nullptr;
  };

  struct Switch {
    topo::NodeId node = topo::kNoNode;
    std::vector<std::uint32_t> tx_of_port; ///< [port - 1] -> Tx index, kNil if uncabled
    /// [port - 1] -> the Tx feeding that input (gets its credits). A packet on that input came from it, so
    /// it is materialised whenever it is looked up here (a plain load, no tx_at).
    std::vector<std::uint32_t> up_tx;
  };

  // ---------------------------------------------------------------- members
  Simulation& sim;
  const topo::Fabric& fabric;
  const routing::RoutingTables& tables;
  PacketConfig cfg;
  PacketPool pool;
  /// The transmitters, two per cable between simulated nodes: index 2k sends from end `a` of the k-th such
  /// cable (site_link[k]), 2k + 1 from end `b`; the opposite direction of i is i ^ 1. A transmitter is made
  /// on first use (tx_at, materialise): null until then, and a port that never carries traffic costs only
  /// its null pointer. Every reader that walks `txs` skips the null ones (they have nothing queued, nothing
  /// on the wire and zero statistics).
  std::vector<Tx*> txs;
  std::vector<topo::LinkId> site_link;    ///< [tx index / 2] -> its cable
  std::vector<std::uint32_t> hca_of_node; ///< NodeId -> HCA index, kNil for other nodes
  std::size_t materialised = 0;           ///< non-null entries of `txs`
  std::vector<Switch> switches;
  std::vector<std::uint32_t> switch_of_node;                               // NodeId -> switch slot
  static constexpr std::size_t kDenseLftMaxEntries = std::size_t{1} << 22; // 16 MB of Tx indices
  /// The static LFTs resolved to transmitters: [switch slot * num_hcas + dst] -> index in txs (kNil: no
  /// route, or an uncabled port) when dense, else empty.
  std::vector<std::uint32_t> lft_tx;
  std::size_t lft_stride = 0; // num_hcas
  bool per_global_hop_vl = false;
  bool static_routing = false; // no adaptive routing: a packet's output at the next switch is known when sent
  std::vector<Hca> hcas;
  std::vector<Qp> qps;
  std::unordered_map<std::uint64_t, std::uint32_t> qp_index; // (src, dst, slot)
  std::vector<Msg> msgs;
  /// Message records are reused once their WRITE/SEND is delivered and acknowledged (PacketNetwork::
  /// recycle_messages): the free ones, taken last in first out.
  bool recycle_msgs = false;
  std::vector<MessageId> free_msgs;
  void store_msg(const Msg& m) {
    if (m.rec.id < msgs.size())
      msgs[m.rec.id] = m;
    else
      msgs.push_back(m);
  }
  NotifyLine* notify = nullptr;
  Poster* poster = nullptr;
  std::function<void(const MessageRecord&)> delivered_cb, acked_cb;
  NetworkStats stats;
  ArPolicy ar;
  Rng* ber_rng = nullptr;
  VlArbiter arbiter;
  // The event model (event_model.hpp): which shortcuts are on.
  bool plain_events = false;      // EventModel::Plain: none of the shortcuts below
  bool checked = false;           // EventModel::Checked: Fast, and every port event asserts the invariants
  bool incoming_shortcut = false; // static routing without PFC: Tx::incoming instead of arrival events
  bool direct_start = false;      // kick may start a lone due packet without queueing it (start_direct)
  bool hca_quiet = false; // an HCA whose next packet will not fit at the end of this one skips kTxDone
  std::int64_t max_pkt_credits = 0; // credits of the largest packet an HCA sends (full MTU, RETH, immediate)
  // Congestion control and PFC (all off by default).
  bool cc_dcqcn = false, cc_ibcc = false, pfc_on = false;
  bool bit_errors = false; // cfg.bit_error_rate > 0 or per-link rates (a flag: start_tx tests it per packet)
  std::vector<double> link_ber; // per LinkId (cfg.link_bit_error_rate); empty: cfg.bit_error_rate everywhere
  bool mark_enqueue = false, mark_dequeue = false; // a marking scheme decides at enqueue / at dequeue
  Rng* ecn_rng = nullptr;
  std::vector<CctEntry> cct;
  std::vector<std::array<IbCcRp, 16>> sl_cc; // IB CC per (HCA, SL) when ibcc.per_sl
  std::vector<QpRateTrace> rate_traces;
  std::vector<PortQueueTrace> queue_traces;

  std::unique_ptr<FaultState> faults; // null until a fault is configured (faults.cpp)

  // ---------------------------------------------------------------- period_skip.cpp
  /// A port's counters that grow with traffic, as a period skip scales them.
  struct TxCounters {
    std::uint64_t packets = 0, bytes = 0, payload = 0;
    Time busy, stall;
  };
  struct PeriodMark {
    bool valid = false;
    NetworkStats stats;
    std::vector<TxCounters> tx; ///< per index in txs (zero for one not made yet)
  };
  PeriodMark period_mark;
  bool period_skips_allowed() const;
  void mark_period();
  bool repeat_periods(std::uint64_t n);
  /// Counters as they are now (what mark_period keeps).
  void snapshot(NetworkStats& s, std::vector<TxCounters>& tx) const;
  /// Adds `f` times each counter's growth since (`s`, `tx`), rounded.
  void extrapolate(const NetworkStats& s, const std::vector<TxCounters>& tx, double f);

  // ---------------------------------------------------------------- fluid_skip.cpp
  /// Steady-state skips inside long messages (PacketNetwork::enable_fluid_skips; docs/engine.md
  /// "Fast-forward"). Samples of every active requester QP's in-order PSN and the time it last advanced,
  /// one per window; five samples with every window's rate within a tolerance of the span's rate, packets in
  /// flight per QP steady and no QP starting or stopping in between let fluid_skip() move every QP's stream
  /// ahead by rate x time.
  struct FluidSkipper final : Component {
    explicit FluidSkipper(Core& core) : Component(core.sim, "fluid skipper"), core(core) {}
    void on_event(EventTag) override { core.fluid_skip(); }
    void request(Time t) { schedule_at(t); }
    Core& core;
  };
  static constexpr int kFluidSamples = 5;
  struct Fluid {
    FluidSkipper* skipper = nullptr;   ///< null: skips off
    std::function<Time()> horizon;     ///< the owner's earliest pending timer (simulation time), or max
    std::function<void(Time)> skipped; ///< the owner moves its pending timers this much earlier
    Time window = Time::us(1);
    Time next_probe;
    std::uint64_t changes_mark = 0; ///< qp_set_changes when the samples began
    int samples = 0;
    bool scheduled = false;
    std::vector<std::uint32_t> qps;                                  ///< active requester QPs sampled
    std::vector<std::array<std::uint32_t, kFluidSamples>> epsn;      ///< per QP in `qps`
    std::vector<std::array<Time, kFluidSamples>> last_rx;            ///< per QP in `qps`
    std::vector<std::array<std::uint32_t, kFluidSamples>> in_flight; ///< per QP: sent, not yet in order
    std::array<Time, kFluidSamples> at{};
    NetworkStats stats0;         ///< counters at the first sample
    std::vector<TxCounters> tx0; ///< per index in txs
    std::uint64_t events0 = 0;
    // Totals reported (FluidSkipStats).
    Time offset;
    std::uint64_t skips = 0, packets_skipped = 0, events_skipped = 0;
  };
  Fluid fluid;
  bool fluid_on = false;
  /// A requester QP became active or idle (the sampled set changed).
  std::uint64_t qp_set_changes = 0;
  /// What a fluid skip would do now: per QP (index in fluid.qps) the packets it may move; the QP that limits
  /// the skip (ref), its packets (k_ref) and the time (dt). Read-only.
  struct FluidPlan {
    std::vector<std::uint32_t> slot; ///< QP -> index in fluid.qps (kNil: not sampled)
    std::vector<std::uint32_t> room;
    std::size_t ref = 0;
    std::int64_t k_ref = 0;
    Time dt;
  };
  void fluid_probe();
  bool fluid_plan(FluidPlan& plan) const;
  double fluid_rate(std::size_t i) const; ///< sampled QP i's packets per ps over the span
  void fluid_skip();

  // ---------------------------------------------------------------- build.cpp
  Core(Simulation& s, const topo::Fabric& f, const routing::RoutingTables& t, const PacketConfig& c,
       EventModel em);
  ~Core(); // (faults.cpp)
  void build();
  /// Transmitter `i`, made on first use: a predictable branch on a pointer the caller loads anyway.
  [[gnu::always_inline]] Tx& tx_at(std::uint32_t i) {
    Tx* t = txs[i];
    if (t == nullptr) [[unlikely]]
      t = &materialise(i);
    return *t;
  }
  Tx& materialise(std::uint32_t i); // (build.cpp)
  void materialise_all();
  /// Where transmitter `i` sits: its cable and the transmitting and receiving ends.
  topo::LinkId link_of_tx(std::uint32_t i) const { return site_link[i >> 1]; }
  topo::PortRef tx_end(std::uint32_t i) const {
    const topo::Link& l = fabric.link(site_link[i >> 1]);
    return (i & 1u) == 0 ? l.a : l.b;
  }
  topo::PortRef rx_end(std::uint32_t i) const { return tx_end(i ^ 1u); }
  HcaTimer& timer_of(HcaIndex h) {
    if (hcas[h].timer == nullptr) [[unlikely]]
      hcas[h].timer = &make_timer(h, "timer");
    return *hcas[h].timer;
  }
  HcaTimer& pacer_of(HcaIndex h) {
    if (hcas[h].pacer == nullptr) [[unlikely]]
      hcas[h].pacer = &make_timer(h, "pacer");
    return *hcas[h].pacer;
  }
  HcaTimer& make_timer(HcaIndex h, const char* what);
  /// Sets qp.rto_deadline (Time::max(): none) and keeps Hca::timed_qps; the last deadline of an HCA cleared
  /// cancels its ACK timer. The caller requests the timer for a new deadline, as before.
  void set_rto(Qp& qp, Time t) {
    const bool was = qp.rto_deadline != Time::max(), armed = t != Time::max();
    qp.rto_deadline = t;
    if (was == armed) return;
    Hca& h = hcas[qp.src];
    if (armed) {
      ++h.timed_qps;
    } else if (--h.timed_qps == 0 && h.timer != nullptr) {
      h.timer->cancel();
    }
  }
  /// The injection rate as both engines define it (common::DeviceKnobs::injection_gbps) on an HCA's cable,
  /// in whole bit/s; the transmitter paces only when it is below the link rate.
  std::uint64_t hca_cap_bps(const topo::Link& link) const {
    return static_cast<std::uint64_t>(
        std::llround(cfg.injection_gbps(link.speed.rate_gbps(), 1.0 / cfg.header_efficiency()) * 1e9));
  }

  // ---------------------------------------------------------------- port.cpp: the transmit path
  void kick(Tx& tx);
  void start_tx(Tx& tx, std::uint32_t pi);
  void tx_done(Tx& tx);
  void arrivals(Tx& tx);
  void credit_wake(Tx& tx);
  void arm_credits(Tx& tx);
  inline void return_credits(const Switch& sw, int in_port, int vl, std::uint32_t wire); // (port.cpp)
  /// Applies the credit returns that have reached `tx` by now.
  void absorb_credits(Tx& tx) {
    const Time now = sim.now();
    while (tx.creditq.front_t() <= now) {
      const LineItem& it = tx.creditq.front();
      tx.credits[it.a] += static_cast<std::int32_t>(it.b); // signed: a PFC pause subtracts
      tx.creditq.pop_front();
    }
  }
  /// Credits leave the peer's input buffer at `left` (>= now) and reach `tx` one cable delay later.
  [[gnu::always_inline]] void push_credits_at(Tx& tx, Time left, std::uint32_t vl, std::uint32_t wire) {
    tx.creditq.insert_sorted({left + tx.ctrl_delay, vl, PacketConfig::credits_for(wire)});
    if (tx.waiting) arm_credits(tx);
  }
  [[gnu::always_inline]] void push_credits(Tx& tx, std::uint32_t vl, std::uint32_t wire) {
    push_credits_at(tx, sim.now(), vl, wire);
  }
  /// Without PFC: the credits of a packet that leaves switch `sw` at `left` (>= now), from input `in_port`.
  void return_credits_at(const Switch& sw, Time left, int in_port, int vl, std::uint32_t wire) {
    Tx& up = *txs[sw.up_tx[static_cast<std::size_t>(in_port - 1)]];
    push_credits_at(up, left, static_cast<std::uint32_t>(vl), wire);
  }

  // ---------------------------------------------------------------- event_model.hpp/.cpp: the shortcuts
  // (inline: defined in event_model.hpp, which the files that use them include)
  inline bool take_incoming(Tx& tx);
  inline bool start_direct(Tx& tx);
  inline void absorb_arrivals(Tx& tx);
  inline void arm_wake(Tx& tx, Time t);
  inline void arrival_wake(Tx& tx);
  inline Time credits_reach(const Tx& tx, std::uint8_t vl, std::int64_t need) const;
  inline Time quiet_credit_time(const Tx& tx) const;
  inline bool quiet_busy(Tx& tx);
  inline bool try_quiet_end(Tx& tx, const Packet& p, Time end, std::int64_t credits_left);
  inline void hand_over(Tx& tx, std::uint32_t pi, Time deliver);
  std::uint32_t blocked_next(Tx& tx, Time end);
  void check_port(const Tx& tx) const;

  // ---------------------------------------------------------------- switch.cpp
  Tx& route_static(std::uint32_t s, const Packet& p) {
    if (!lft_tx.empty()) {
      const std::uint32_t t = lft_tx[s * lft_stride + p.dst];
      if (t == kNil) [[unlikely]]
        throw_no_route(switches[s], p);
      return tx_at(t);
    }
    const Switch& sw = switches[s];
    const routing::Port out = tables.next_hop(sw.node, p.dst);
    if (out == routing::kNoPort || sw.tx_of_port[out - 1] == kNil) throw_no_route(sw, p);
    return tx_at(sw.tx_of_port[out - 1]);
  }
  [[noreturn]] void throw_no_route(const Switch& sw, const Packet& p) const;
  void arrive_switch(std::uint32_t s, int in_port, std::uint32_t pi);
  /// Puts packet `pi`, arriving on `in_port` of switch `s`, into output `tx`'s virtual output queue.
  [[gnu::always_inline]] void enqueue_at_switch(std::uint32_t s, int in_port, std::uint32_t pi, Tx& tx) {
    Packet& p = pool[pi];
    p.in_port = static_cast<std::uint16_t>(in_port);
    p.in_vl = p.vl;
    if (per_global_hop_vl) next_global_hop_vl(s, in_port, p);
    if (mark_enqueue) mark(tx, p, tx.queued_bytes);
    voq_push(tx, pool, pi, p.vl, static_cast<unsigned>(in_port - 1));
  }
  void next_global_hop_vl(std::uint32_t s, int in_port, Packet& p) const;
  /// The packet switch output `tx` sends next off its queues, or kNil.
  [[gnu::always_inline]] std::uint32_t select_switch(Tx& tx) {
    const std::uint32_t pi = arbiter.select(tx, pool);
    if (mark_dequeue && pi != kNil) mark(tx, pool[pi], tx.queued_bytes);
    return pi;
  }
  void mark(Tx& tx, Packet& p, std::uint64_t q);

  // ---------------------------------------------------------------- hca.cpp
  Qp& qp_of(HcaIndex src, HcaIndex dst, std::uint32_t slot, std::uint32_t* index = nullptr);
  Qp* find_qp(HcaIndex src, HcaIndex dst, std::uint32_t slot);
  MessageId post_now(const MessageSpec& s);
  void activate(HcaIndex h, std::uint32_t q, bool responder);
  void hca_wake(HcaIndex h);
  std::uint32_t select_hca(Tx& tx);
  inline std::uint32_t make_request(std::uint32_t q, Tx& tx, Time now, Time& wake, bool& done); // (hca.cpp)
  std::uint32_t make_read_response(std::uint32_t q, Tx& tx);
  void send_ctrl(HcaIndex from, HcaIndex to, std::uint32_t q, Kind kind, std::uint32_t psn, std::uint8_t vl,
                 std::uint32_t wire = 0);
  void arrive_hca(HcaIndex h, Tx& from, std::uint32_t pi);
  inline bool accept(const Packet& p);              // (hca.cpp)
  inline void on_data(HcaIndex h, const Packet& p); // (hca.cpp)
  void on_ack(std::uint32_t q, std::uint32_t psn);
  void complete_acked(std::uint32_t q);
  void rewind(std::uint32_t q, std::uint32_t psn);
  void on_nak(std::uint32_t q, std::uint32_t epsn);
  void on_timeout(std::uint32_t q);
  void on_read_request(HcaIndex h, const Packet& p);
  void on_read_response(const Packet& p);
  void notify_deliver(const LineItem& it);
  std::uint8_t vl_of(std::uint8_t sl) const {
    return static_cast<std::uint8_t>(std::min<int>(sl, cfg.num_vls - 1));
  }
  bool fits(Tx& tx, std::uint32_t wire, std::uint8_t vl) const {
    const bool ok = tx.credits[vl] >= static_cast<std::int64_t>(PacketConfig::credits_for(wire));
    if (!ok) tx.credit_blocked = true;
    return ok;
  }
  // Framing (packets per message, wire bytes per packet) is common::Framing's, shared with the flow engine.
  std::uint32_t npkts_of(std::uint64_t bytes) const { return static_cast<std::uint32_t>(cfg.packets(bytes)); }
  /// Bytes on the wire of the WRITE/SEND packet that starts `off` bytes into message `s`: a SEND carries no
  /// RETH, a WRITE with immediate its immediate data on the last packet.
  std::uint32_t request_wire(const MessageSpec& s, std::uint64_t off) const {
    return cfg.packet_wire_bytes(s.bytes, off, s.verb != Verb::Send, s.verb == Verb::WriteImm);
  }

  // ---------------------------------------------------------------- cc_points.cpp
  double line_bps(HcaIndex h) const;
  void init_cc(Qp& qp);
  IbCcRp& ib_state(Qp& qp, std::uint8_t sl) { return cfg.ibcc.per_sl ? sl_cc[qp.src][sl & 15u] : qp.ib; }
  std::int64_t t_maxpkt_ps(HcaIndex h) const;
  std::int64_t ipd_ps(HcaIndex h, int ccti) const;
  void trace_rate(const Qp& qp, double bps);
  double ibcc_rate_bps(const Qp& qp, int ccti) const;
  void dcqcn_rate_changed(Qp& qp, double old_bps);
  void dcqcn_paced(Qp& qp, const Msg& m, Time now, Time& ready, Time& wake);
  void pace(Qp& qp, std::uint32_t wire, std::uint8_t sl, Time now);
  void on_cnp(std::uint32_t q, std::uint8_t sl);
  void notify_congestion(HcaIndex h, const Packet& p);

  // ---------------------------------------------------------------- pfc.cpp
  void init_pfc(Tx& tx) const;
  void send_pause(Tx& tx, std::uint32_t vl, bool pause);
  bool pfc_admit(Tx& up, const Packet& p);
  void pfc_left(Tx& up, int vl, std::uint32_t wire);

  // ---------------------------------------------------------------- faults.cpp
  FaultState& fault_state(); // created on first use: turns the Fast shortcuts off
  void drain_dead(Tx& tx);
  void link_change(topo::LinkId l, bool up);
  void sm_sweep();
  void qp_error(std::uint32_t q);
  void count_lost(Tx& from, const Packet& p); // a corrupted or lost packet dropped at its receiver
  void set_rate(Tx& tx, std::uint64_t rate_bps);

  // ---------------------------------------------------------------- diagnostics.cpp
  void sample_queues();
  std::vector<WaitEdge> wait_edges() const;
  std::string out_name(const Tx& tx, int vl) const;
  std::string in_name(topo::NodeId n, int port, int vl) const;
  std::vector<PortStats> port_stats(bool materialised_only) const;
};

} // namespace ibn::pkt::detail
