#include "models/packet/network.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <deque>
#include <queue>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace ibn::pkt {

std::string to_string(Verb v) {
  switch (v) {
  case Verb::Write:
    return "write";
  case Verb::WriteImm:
    return "write_imm";
  case Verb::Send:
    return "send";
  case Verb::Read:
    return "read";
  }
  return "?";
}

namespace {
constexpr std::uint32_t kNil = ~std::uint32_t{0};
constexpr std::size_t kMaxVls = 15; // data VLs (PacketConfig::validate)

enum class Kind : std::uint8_t { Data, Ack, Nak, ReadReq, ReadResp, Cnp };

// Packet::flags: congestion marks set by switches.
constexpr std::uint8_t kFlagCe = 1;   // ECN congestion experienced (DCQCN's CP)
constexpr std::uint8_t kFlagFecn = 2; // IB forward explicit congestion notification

// PFC as credits: in PFC mode a transmitter starts with kPfcBase credits (never exhausted by the ordinary
// credit returns, which keep flowing) and a pause frame subtracts kPfcPause, a resume frame adds it back.
constexpr std::int64_t kPfcBase = std::int64_t{1} << 29;
constexpr std::int32_t kPfcPause = std::int32_t{1} << 30;

// A packet in flight. Pooled and addressed by index; `next` links it into one FIFO at a time.
struct alignas(64) Packet {
  std::uint32_t next = kNil;
  std::uint32_t qp = 0;
  std::uint32_t psn = 0;
  std::uint32_t msg = 0;
  std::uint32_t payload = 0;
  std::uint32_t wire = 0;
  HcaIndex src = 0; ///< network source HCA of this packet
  HcaIndex dst = 0; ///< network destination HCA of this packet
  std::uint16_t in_port = 0;
  std::uint8_t vl = 0;
  std::uint8_t in_vl = 0;
  Kind kind = Kind::Data;
  bool last = false;
  bool corrupted = false;
  std::uint8_t flags = 0; ///< kFlagCe, kFlagFecn
  Time tail;              ///< when its last byte reached (or will reach) the current node's input
};

/// Pool index 0 is a sentinel, never allocated: the tail of every empty FIFO (so that pushing needs no branch
/// on whether the FIFO was empty).
constexpr std::uint32_t kSentinelPacket = 0;

struct Fifo {
  std::uint32_t head = kNil;
  std::uint32_t tail = kSentinelPacket;
  bool empty() const { return head == kNil; }
};

struct LineItem {
  Time t;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
};

/// A FIFO of LineItems in a power-of-two ring buffer: no allocation once it has grown to its working size
/// (std::deque allocates and frees 512-byte blocks as it slides, and costs more per push and pop).
class ItemRing {
 public:
  bool empty() const { return count_ == 0; }
  std::uint32_t size() const { return count_; }
  const LineItem& front() const { return buf_[head_]; }
  /// The first item's time, Time::max() when empty: kept in the ring itself, so that asking whether
  /// anything is due (the common "no") reads no item.
  Time front_t() const { return front_t_; }
  const LineItem& at(std::uint32_t i) const { return buf_[(head_ + i) & mask_]; }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --count_;
    front_t_ = count_ != 0 ? buf_[head_].t : Time::max();
  }
  /// Allocates room for `n` items (rounded up to a power of two) while empty.
  void reserve(std::uint32_t n) {
    while (capacity() < n) grow();
  }
  [[gnu::always_inline]] void push_back(const LineItem& x) {
    if (count_ == capacity()) [[unlikely]]
      grow();
    buf_[(head_ + count_) & mask_] = x;
    if (count_ == 0) front_t_ = x.t;
    last_t_ = x.t;
    ++count_;
  }
  /// Inserts keeping the items ordered by time, after those with the same time (usually at the back).
  [[gnu::always_inline]] void insert_sorted(const LineItem& x) {
    if (count_ != 0 && last_t_ > x.t) [[unlikely]] {
      insert_inside(x);
      return;
    }
    push_back(x);
  }

 private:
  [[gnu::noinline]] void insert_inside(const LineItem& x) {
    if (count_ == capacity()) grow();
    std::uint32_t i = count_;
    while (i > 0 && buf_[(head_ + i - 1) & mask_].t > x.t) {
      buf_[(head_ + i) & mask_] = buf_[(head_ + i - 1) & mask_];
      --i;
    }
    buf_[(head_ + i) & mask_] = x;
    ++count_;
    front_t_ = buf_[head_].t; // (last_t_ is unchanged: x went before the last item)
  }
  std::uint32_t capacity() const { return cap_; }
  [[gnu::noinline]] void grow() {
    const std::uint32_t cap = cap_ == 0 ? 8 : cap_ * 2;
    auto n = std::make_unique<LineItem[]>(cap);
    for (std::uint32_t i = 0; i < count_; ++i) n[i] = buf_[(head_ + i) & mask_];
    buf_ = std::move(n);
    head_ = 0;
    mask_ = cap - 1;
    cap_ = cap;
  }
  std::unique_ptr<LineItem[]> buf_;
  std::uint32_t head_ = 0;
  std::uint32_t count_ = 0;
  std::uint32_t mask_ = 0;
  std::uint32_t cap_ = 0; // mask_ + 1 once allocated
  Time front_t_ = Time::max();
  Time last_t_; // time of the last item (when not empty)
};

// Event tags of a transmitter (one component per directed cable end).
constexpr EventTag kTxDone = 0;  // the current packet's last byte left
constexpr EventTag kArrival = 1; // the head packet on the cable reaches the peer
constexpr EventTag kCredits = 2; // the head credit return reaches this transmitter (only while it waits)
constexpr EventTag kWake = 3;    // an idle switch output: a packet bound for it arrives at its switch

} // namespace

struct PacketNetwork::Impl {
  // ---------------------------------------------------------------- components
  /// Completion notifications (constant nic_rx delay): a FIFO with one pending event for its head.
  struct NotifyLine final : Component {
    NotifyLine(Impl& impl, std::string name) : Component(impl.sim, std::move(name)), impl(impl) {}
    void push(Time t, std::uint32_t a, std::uint32_t b) {
      items.push_back({t, a, b});
      if (items.size() == 1) schedule_at(t);
    }
    void on_event(EventTag) override {
      while (!items.empty() && items.front().t <= now()) {
        const LineItem it = items.front();
        items.pop_front();
        impl.notify_deliver(it);
      }
      if (!items.empty()) schedule_at(items.front().t);
    }
    Impl& impl;
    ItemRing items;
  };

  /// One transmitting cable end (an output port of a switch or an HCA's port), with the two delay lines
  /// of its cable: the packets it sent that have not reached the peer yet (`wire`, one pending event for
  /// its head), and the credits the peer returned that have not reached it yet (`creditq`). Credits are
  /// applied lazily, when the transmitter next selects a packet; an event for them is scheduled only while
  /// the transmitter is idle and waits for credits (`waiting`), so a busy or idle port costs no event per
  /// credit return.
  struct alignas(64) Tx final : Component {
    // A Foreground component: it posts its own events with Simulation::post.
    Tx(Impl& impl, std::uint32_t index, std::string name)
        : Component(impl.sim, std::move(name), HandlerKind::Foreground), impl(impl), index(index) {}
    void on_event(EventTag tag) override {
      switch (tag) {
      case kTxDone:
        impl.tx_done(*this);
        break;
      case kArrival:
        impl.arrivals(*this);
        break;
      case kCredits:
        impl.credit_wake(*this);
        break;
      default:
        impl.arrival_wake(*this);
        break;
      }
    }

    // Layout: Tx is 64-byte aligned and the fields an event of this port (or a neighbour returning credits
    // or handing over a packet) touches are packed into its first lines, hottest first, so that an event
    // touches few cache lines of it. Line 0 (after the Component base): state of the current transmission.
    Impl& impl;
    std::uint32_t index;
    std::uint32_t current = kNil;
    bool busy = false;
    bool owner_is_switch = false;
    bool peer_is_switch = false;
    /// A transmission that ends at `busy_until` with no kTxDone pending (see start_tx): a switch output with
    /// nothing to do then, or an HCA whose next packet will not fit the credits then (quiet_need). The port
    /// counts as idle from `busy_until` on.
    bool quiet_end = false;
    bool waiting = false; ///< idle with packets that do not fit the credits
    bool stalled = false;
    bool credit_blocked = false; ///< set by the last selection: a packet was ready but credits were short
    std::uint8_t cur_in_vl = 0;  ///< of `current` (switch outputs): where it came in, for its credits
    std::uint16_t cur_in_port = 0;
    bool capped = false;       ///< cap_bps != 0 (tested per packet: kept on this line)
    std::uint8_t quiet_vl = 0; ///< with quiet_need: the VL of the blocked next packet
    std::uint32_t cur_wire = 0;
    std::uint32_t owner = 0;      ///< switch slot or HCA index
    std::uint32_t peer_owner = 0; ///< switch slot or HCA index
    /// An HCA in a quiet transmission (quiet_end) whose next packet needs this many credits on quiet_vl,
    /// more than it will have when the transmission ends; 0 otherwise. Its kCredits event is armed for when
    /// the returns on their way bring enough (see start_tx).
    std::uint32_t quiet_need = 0;
    // Line 1: times and queue sizes.
    /// HCA injection cap: the earliest time the next packet may start (Time::zero() when uncapped).
    Time gate;
    Time busy_until;              ///< end of the current transmission (with quiet_end)
    Time wake_at = Time::max();   ///< earliest pending kWake event (Time::max(): none)
    Time credit_at = Time::max(); ///< earliest pending kCredits event (Time::max(): none)
    std::uint64_t queued_packets = 0;
    std::uint64_t queued_bytes = 0;
    Time prop;
    std::uint64_t ps_per_byte = 0; ///< 8e12 / rate when that is a whole number (then no carry), else 0
    // Line 2: what the peer touches when it returns credits.
    ItemRing creditq; ///< (arrival time here, VL, credits)
    Time ctrl_delay;  ///< credit return / pause frame delay to this transmitter
    // Switch outputs: virtual output queues [vl * radix + (in_port - 1)] and a bitmask of non-empty ones.
    Fifo* voq = nullptr;
    int peer_port = 0;
    int radix = 0;
    // Line 3: what the transmitter handing packets to this output touches.
    /// Switch outputs, static routing: packets bound for this output that have not reached its switch yet,
    /// (arrival time, packet, input port) ordered by time. They join the virtual output queues when the
    /// output next selects (kick), in arrival order; an event (kWake) is scheduled only while the output is
    /// idle.
    ItemRing incoming;
    std::uint64_t* nonempty = nullptr; // [vl * words + w]
    std::uint16_t words = 0;           ///< 64-bit words per VL in `nonempty`
    // Line 4: credits (int32: buffer credits, or kPfcBase minus at most one kPfcPause under PFC).
    std::array<std::int32_t, kMaxVls> credits{}; ///< per VL, of the peer's input buffer
    // Line 5.
    std::array<std::uint16_t, kMaxVls> rr_input{}; ///< per VL: last input served (0-based)
    // Counted per packet here, next to the rest of the hot state; port_stats() copies them into PortStats.
    std::uint64_t peak_queue = 0; ///< PortStats::peak_queue_bytes
    std::uint64_t sent_packets = 0;
    // Line 5.
    std::uint64_t sent_bytes = 0;
    Time busy_time;
    ItemRing wire;             ///< (arrival time at the peer, packet)
    std::uint64_t cap_bps = 0; ///< HCA injection cap below the link rate (0: none)
    // Statistics and the rest.
    std::uint64_t carry = 0;
    std::uint64_t cap_carry = 0; ///< remainder of the cap's gap computation (like `carry`)
    std::uint64_t rate_bps = 0;
    Time stall_since;
    PortStats stats;
    struct Arb { // position in a VL arbitration table and the weight left there
      std::size_t pos = 0;
      int left = 0;
    };
    Arb high, low;
    std::uint64_t high_bytes = 0; // high-priority bytes since the last low-priority packet
    topo::NodeId node = topo::kNoNode;
    int port = 0;
    topo::LinkId link = topo::kNoLink;
    topo::NodeId peer = topo::kNoNode;
    std::uint32_t rev = kNil; ///< the Tx of the opposite direction of the same cable
    std::vector<Fifo> voq_store;
    std::vector<std::uint64_t> nonempty_store;
    // Congestion control (cold unless enabled).
    std::uint64_t ecn_kmin = 0, ecn_kmax = 0; ///< DCQCN marking thresholds of this output (bytes)
    std::uint32_t fecn_count = 0;             ///< IB CC: eligible packets since the last FECN mark
    // PFC, on a transmitter whose peer is a switch: the bytes it sent that sit in the peer's input buffer,
    // per priority, and the pause state the peer keeps for it.
    std::array<std::uint64_t, kMaxVls> pfc_in{};
    std::uint32_t pfc_paused = 0; ///< bit per VL: the peer sent XOFF
    std::array<Time, kMaxVls> pause_since{};
    std::uint64_t pfc_xoff = 0, pfc_xon = 0, pfc_limit = 0;
  };

  /// Queue sampler (Background): records every output's queued bytes each `period`.
  struct Sampler final : Component {
    Sampler(Impl& impl, Time period)
        : Component(impl.sim, "queue sampler", HandlerKind::Background), impl(impl), period(period) {
      schedule_at(Time::zero());
    }
    void on_event(EventTag) override {
      impl.sample_queues();
      schedule_in(period);
    }
    Impl& impl;
    Time period;
  };

  /// HCA timer: wakes the HCA when a posted message becomes eligible, a pacing gap ends or an ACK timeout
  /// expires. At most one pending event.
  struct HcaTimer final : Component {
    HcaTimer(Impl& impl, HcaIndex h, std::string name)
        : Component(impl.sim, std::move(name)), impl(impl), h(h) {}
    void on_event(EventTag) override {
      pending = EventHandle{};
      impl.hca_wake(h);
    }
    void request(Time t) {
      if (pending.valid() && pending.time <= t && sim().is_pending(pending)) return;
      if (pending.valid()) sim().cancel(pending);
      pending = schedule_at(std::max(t, now()));
    }
    void cancel() {
      if (pending.valid()) sim().cancel(pending);
      pending = EventHandle{};
    }
    Impl& impl;
    HcaIndex h;
    EventHandle pending;
  };

  /// Deferred posts (post_at): a min-heap with one pending event.
  struct Poster final : Component {
    explicit Poster(Impl& impl) : Component(impl.sim, "poster"), impl(impl) {}
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
        impl.post_now(s);
      }
      if (!heap.empty()) pending = schedule_at(heap.top().t);
    }
    Impl& impl;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    std::uint64_t seq = 0;
    EventHandle pending;
  };

  // ---------------------------------------------------------------- transport state
  struct Msg {
    MessageRecord rec;
    std::uint32_t qp = 0;
    std::uint32_t first_psn = 0;
    std::uint32_t npkts = 1;
    std::uint32_t recv_pkts = 0;
    std::uint64_t recv_bytes = 0;
    bool psn_assigned = false;
    bool req_sent = false; ///< READ: request on the wire
  };

  struct ReadWork {
    std::uint32_t msg = 0;
    std::uint64_t remaining = 0;
    std::uint32_t sent_pkts = 0;
  };

  struct Qp {
    HcaIndex src = 0, dst = 0;
    std::uint32_t slot = 0;
    // requester (at src)
    std::deque<std::uint32_t> sendq; ///< messages not yet complete at the requester, in post order
    std::size_t send_pos = 0;        ///< index in sendq of the message being segmented
    std::uint64_t send_off = 0;      ///< bytes of it already sent
    std::uint32_t next_psn = 0;
    std::uint32_t max_psn_sent = 0; ///< one past the highest PSN ever sent
    std::uint32_t una = 0;
    Time next_send_time;
    Time rto_deadline = Time::max();
    int retries = 0;
    std::uint32_t reads_outstanding = 0;
    /// make_request's memo, valid until the send state changes (send_changed): the message at send_pos
    /// after skipping READs already requested (kNil: walk sendq again), and the credits on `blocked_vl`
    /// that its next packet lacked (0: none), so that asking again while they are still short is two loads.
    std::uint32_t cur_msg = kNil;
    std::uint32_t blocked_need = 0;
    std::uint8_t blocked_vl = 0;
    bool req_active = false;
    // responder (at dst)
    std::uint32_t epsn = 0;
    std::set<std::uint32_t> ooo;
    bool nak_sent = false;
    std::uint32_t since_ack = 0;
    std::deque<ReadWork> reads;
    bool resp_active = false;
    Time last_cnp = Time::max(); ///< responder: when it last sent a CNP for this QP (max: never)
    // congestion control at the requester
    DcqcnRp rp;
    IbCcRp ib;
    std::uint32_t trace = kNil; ///< index in rate_traces
  };

  struct Hca {
    topo::NodeId node = topo::kNoNode;
    std::uint32_t tx = kNil;
    std::vector<std::uint32_t> active; ///< (qp << 1) | responder-role
    std::size_t rr = 0;
    Fifo ctrl;                          ///< ACK/NAK packets, sent before data
    std::vector<std::uint32_t> req_qps; ///< QPs this HCA is the requester of
    HcaTimer* timer = nullptr;          ///< ACK timeouts
    /// Wake-ups for sending (a posted message becomes eligible, a pacing gap or the injection cap ends): a
    /// separate timer, so that a wake-up per paced packet does not cancel and re-arm the far-off ACK timeout.
    HcaTimer* pacer = nullptr;
  };

  struct Switch {
    topo::NodeId node = topo::kNoNode;
    std::vector<std::uint32_t> tx_of_port; ///< [port - 1] -> Tx index, kNil if uncabled
    std::vector<std::uint32_t> up_tx;      ///< [port - 1] -> the Tx feeding that input (gets its credits)
  };

  // ---------------------------------------------------------------- members
  Simulation& sim;
  const topo::Fabric& fabric;
  const routing::RoutingTables& tables;
  PacketConfig cfg;
  std::vector<Packet> pool;
  std::vector<std::uint32_t> free_list;
  std::uint64_t in_flight = 0;
  std::uint64_t peak_in_flight = 0;
  std::vector<Tx*> txs;
  std::vector<Switch> switches;
  std::vector<std::uint32_t> switch_of_node;                               // NodeId -> switch slot
  static constexpr std::size_t kDenseLftMaxEntries = std::size_t{1} << 22; // 16 MB of Tx indices
  /// The static LFTs resolved to transmitters: [switch slot * num_hcas + dst] -> index in txs (kNil: no
  /// route, or an uncabled port) when dense, else empty.
  std::vector<std::uint32_t> lft_tx;
  std::size_t lft_stride = 0; // num_hcas
  bool per_global_hop_vl = false;
  bool static_routing =
      false; // no adaptive routing: a packet's output at the next switch is known when it is sent
  std::vector<Hca> hcas;
  std::vector<Qp> qps;
  std::unordered_map<std::uint64_t, std::uint32_t> qp_index; // (src, dst, slot)
  std::vector<Msg> msgs;
  NotifyLine* notify = nullptr;
  Poster* poster = nullptr;
  std::function<void(const MessageRecord&)> delivered_cb, acked_cb;
  NetworkStats stats;
  std::unordered_map<std::uint64_t, std::pair<routing::Port, Time>> ar_bind; // bounded AR: (switch, dst)
  Rng* ber_rng = nullptr;
  std::vector<VlArbEntry> arb_high, arb_low; // effective VL arbitration tables
  int single_arb_vl =
      -1; // the VL when the tables are one low entry of positive weight (the default), else -1
  // Congestion control and PFC (all off by default).
  bool plain_events = false;      // EventModel::Plain: none of the shortcuts below
  bool incoming_shortcut = false; // static routing without PFC: Tx::incoming instead of arrival events
  bool direct_start = false;      // kick may start a lone due packet without queueing it (start_direct)
  bool hca_quiet = false; // an HCA whose next packet will not fit at the end of this one skips kTxDone
  std::int64_t max_pkt_credits = 0; // credits of the largest packet an HCA sends (full MTU, RETH, immediate)
  bool cc_dcqcn = false, cc_ibcc = false, pfc_on = false;
  bool bit_errors = false; // cfg.bit_error_rate > 0 (a flag: start_tx tests it per packet)
  bool mark_enqueue = false, mark_dequeue = false; // a marking scheme decides at enqueue / at dequeue
  Rng* ecn_rng = nullptr;
  std::vector<CctEntry> cct;
  std::vector<std::array<IbCcRp, 16>> sl_cc; // IB CC per (HCA, SL) when ibcc.per_sl
  std::vector<QpRateTrace> rate_traces;
  std::vector<PortQueueTrace> queue_traces;

  Impl(Simulation& s, const topo::Fabric& f, const routing::RoutingTables& t, const PacketConfig& c,
       EventModel em)
      : sim(s), fabric(f), tables(t), cfg(c), plain_events(em == EventModel::Plain) {
    cfg.validate();
    arb_high = cfg.vl_arb_high;
    arb_low = cfg.vl_arb_low;
    if (arb_low.empty())
      for (int v = 0; v < cfg.num_vls; ++v) arb_low.push_back({v, 4});
    if (arb_high.empty() && arb_low.size() == 1 && arb_low[0].weight > 0) single_arb_vl = arb_low[0].vl;
    if (tables.num_hcas() != f.hcas().size())
      throw InputError("routing tables were computed for another fabric (" +
                       std::to_string(tables.num_hcas()) + " HCAs vs " + std::to_string(f.hcas().size()) +
                       ")");
    pool.emplace_back(); // the sentinel (kSentinelPacket)
    build();
    sim.add_progress_probe([this] { return in_flight; });
    sim.add_wait_for_provider([this] { return wait_edges(); });
    ber_rng = &sim.rng("packet/bit-errors");
    stats.min_credits_seen = static_cast<std::int64_t>(cfg.switch_buffer_bytes / 64);
    if (pfc_on) stats.min_credits_seen = kPfcBase;
    if (cfg.trace_interval_ns > 0) {
      for (const Tx* t : txs) queue_traces.push_back({t->node, t->port, t->link, {}});
      sim.make<Sampler>(*this, std::max(Time::ps(1), Time::from_ns(cfg.trace_interval_ns)));
    }
  }

  void sample_queues() {
    const Time now = sim.now();
    for (std::size_t i = 0; i < txs.size(); ++i) {
      const Tx& tx = *txs[i];
      std::uint64_t q = tx.queued_bytes;
      // Static routing: packets that have reached the switch but not yet joined the queues.
      for (std::uint32_t k = 0; k < tx.incoming.size(); ++k) {
        const LineItem& it = tx.incoming.at(k);
        if (it.t <= now) q += pool[it.a].wire;
      }
      queue_traces[i].queue_bytes.push_back({now, static_cast<double>(q)});
    }
  }

  void build() {
    pfc_on = cfg.flow_control == FlowControl::Pfc;
    bit_errors = cfg.bit_error_rate > 0;
    cc_dcqcn = cfg.cc == CcMode::Dcqcn;
    cc_ibcc = cfg.cc == CcMode::IbCc;
    const MarkPoint mp = cc_dcqcn ? cfg.dcqcn.mark_point : cfg.ibcc.mark_point;
    mark_enqueue = (cc_dcqcn || cc_ibcc) && mp == MarkPoint::Enqueue;
    mark_dequeue = (cc_dcqcn || cc_ibcc) && mp == MarkPoint::Dequeue;
    ecn_rng = &sim.rng("packet/ecn");
    if (cc_ibcc) {
      cct = cfg.ibcc.table();
      if (cfg.ibcc.per_sl) sl_cc.assign(tables.num_hcas(), {});
      for (auto& a : sl_cc) a.fill(IbCcRp(cfg.ibcc));
    }
    switch_of_node.assign(fabric.num_nodes(), kNil);
    std::vector<std::uint32_t> hca_of_node(fabric.num_nodes(), kNil);
    for (HcaIndex h = 0; h < tables.num_hcas(); ++h) hca_of_node[tables.hca_nodes()[h]] = h;
    hcas.resize(tables.num_hcas());
    for (topo::NodeId n = 0; n < fabric.num_nodes(); ++n) {
      const auto& node = fabric.node(n);
      if (node.kind == topo::NodeKind::Switch || node.kind == topo::NodeKind::Router) {
        switch_of_node[n] = static_cast<std::uint32_t>(switches.size());
        Switch s;
        s.node = n;
        s.tx_of_port.assign(static_cast<std::size_t>(node.radix), kNil);
        switches.push_back(std::move(s));
      }
    }
    for (HcaIndex h = 0; h < hcas.size(); ++h) {
      hcas[h].node = tables.hca_nodes()[h];
      hcas[h].timer = &sim.make<HcaTimer>(*this, h, "hca " + fabric.node(hcas[h].node).name + " timer");
      hcas[h].pacer = &sim.make<HcaTimer>(*this, h, "hca " + fabric.node(hcas[h].node).name + " pacer");
    }
    // Two transmitters per cable between simulated nodes (aggregation nodes carry no traffic).
    auto simulated = [&](topo::NodeId n) { return switch_of_node[n] != kNil || hca_of_node[n] != kNil; };
    for (topo::LinkId l = 0; l < fabric.num_links(); ++l) {
      const topo::Link& link = fabric.link(l);
      if (!simulated(link.a.node) || !simulated(link.b.node)) continue;
      const std::uint32_t ia = make_tx(l, link.a, link.b, hca_of_node);
      const std::uint32_t ib = make_tx(l, link.b, link.a, hca_of_node);
      txs[ia]->rev = ib;
      txs[ib]->rev = ia;
    }
    for (Switch& sw : switches) {
      sw.up_tx.assign(sw.tx_of_port.size(), kNil);
      for (std::size_t i = 0; i < sw.tx_of_port.size(); ++i)
        if (sw.tx_of_port[i] != kNil) sw.up_tx[i] = txs[sw.tx_of_port[i]]->rev;
    }
    // The static LFTs as one dense array when small enough (a load per hop instead of the tables' lookup).
    const std::size_t nh = tables.num_hcas();
    if (cfg.ar_mode == ArMode::Off && !switches.empty() && nh > 0 &&
        switches.size() * nh <= kDenseLftMaxEntries) {
      lft_tx.resize(switches.size() * nh);
      lft_stride = nh;
      for (std::size_t s = 0; s < switches.size(); ++s)
        for (HcaIndex d = 0; d < nh; ++d) {
          const routing::Port out = tables.next_hop(switches[s].node, d);
          lft_tx[s * nh + d] = out == routing::kNoPort ? kNil : switches[s].tx_of_port[out - 1];
        }
    }
    per_global_hop_vl = tables.vl_rule() == routing::VlRule::PerGlobalHop;
    static_routing = cfg.ar_mode == ArMode::Off;
    incoming_shortcut = static_routing && !pfc_on && !plain_events;
    direct_start =
        incoming_shortcut && !per_global_hop_vl && !mark_enqueue && !mark_dequeue && single_arb_vl >= 0;
    hca_quiet = incoming_shortcut && !cc_dcqcn && !cc_ibcc;
    max_pkt_credits = PacketConfig::credits_for(cfg.mtu_bytes + cfg.header_bytes + cfg.reth_bytes + 4);
    notify = &sim.make<NotifyLine>(*this, "completions");
    poster = &sim.make<Poster>(*this);
  }

  std::uint32_t make_tx(topo::LinkId l, topo::PortRef me, topo::PortRef peer,
                        const std::vector<std::uint32_t>& hca_of_node) {
    const auto idx = static_cast<std::uint32_t>(txs.size());
    const auto& node = fabric.node(me.node);
    Tx& tx = sim.make<Tx>(*this, idx, node.name + " port " + std::to_string(me.port));
    txs.push_back(&tx);
    const topo::Link& link = fabric.link(l);
    tx.node = me.node;
    tx.port = me.port;
    tx.link = l;
    tx.rate_bps = link.rate_bps();
    if (tx.rate_bps == 0) throw InputError("link " + std::to_string(l) + " has no rate");
    if (8'000'000'000'000ull % tx.rate_bps == 0) tx.ps_per_byte = 8'000'000'000'000ull / tx.rate_bps;
    tx.prop = link.latency + cfg.fec_latency;
    tx.owner_is_switch = switch_of_node[me.node] != kNil;
    tx.owner = tx.owner_is_switch ? switch_of_node[me.node] : hca_of_node[me.node];
    tx.peer = peer.node;
    tx.peer_port = peer.port;
    tx.peer_is_switch = switch_of_node[peer.node] != kNil;
    tx.peer_owner = tx.peer_is_switch ? switch_of_node[peer.node] : hca_of_node[peer.node];
    const std::uint32_t buffer = tx.peer_is_switch ? cfg.switch_buffer_bytes : cfg.hca_buffer_bytes;
    std::fill(tx.credits.begin(), tx.credits.begin() + cfg.num_vls,
              pfc_on ? kPfcBase : static_cast<std::int64_t>(buffer / 64));
    tx.ctrl_delay = tx.prop + cfg.credit_update_delay;
    if (pfc_on) {
      // Pause frames (and, for the ordering of this line, credit bookkeeping) take the frame's serialization
      // plus the propagation.
      tx.ctrl_delay = tx.prop + serialization_time(cfg.pfc.pause_frame_bytes, tx.rate_bps);
      const std::uint64_t max_pkt = cfg.mtu_bytes + cfg.header_bytes + cfg.reth_bytes + 4;
      std::uint64_t headroom = cfg.pfc.headroom_bytes;
      if (headroom == 0) // 2 x C x t_prop + MTU_S + MTU_R + pause frame + the 3,840-byte response allowance
        headroom = static_cast<std::uint64_t>(2.0 * static_cast<double>(tx.rate_bps) * tx.prop.to_s() / 8.0) +
                   2 * max_pkt + cfg.pfc.pause_frame_bytes + 3840;
      tx.pfc_limit = cfg.pfc.buffer_bytes;
      tx.pfc_xoff = headroom < tx.pfc_limit ? tx.pfc_limit - headroom : 0;
      tx.pfc_xon = tx.pfc_xoff > cfg.pfc.resume_offset_bytes ? tx.pfc_xoff - cfg.pfc.resume_offset_bytes : 0;
    }
    if (cc_dcqcn) {
      const double scale = cfg.dcqcn.scale_ref_gbps > 0
                               ? static_cast<double>(tx.rate_bps) / (cfg.dcqcn.scale_ref_gbps * 1e9)
                               : 1.0;
      tx.ecn_kmin = static_cast<std::uint64_t>(cfg.dcqcn.kmin_bytes * scale);
      tx.ecn_kmax = static_cast<std::uint64_t>(cfg.dcqcn.kmax_bytes * scale);
    }
    tx.wire.reserve(8); // per-port state, allocated with the port rather than by the first packets
    tx.creditq.reserve(8);
    if (tx.owner_is_switch) tx.incoming.reserve(16);
    tx.stats.link = l;
    tx.stats.node = me.node;
    tx.stats.port = me.port;
    if (tx.owner_is_switch) {
      tx.radix = node.radix;
      tx.words = static_cast<std::uint16_t>((node.radix + 63) / 64);
      tx.voq_store.assign(static_cast<std::size_t>(cfg.num_vls * node.radix), Fifo{});
      tx.nonempty_store.assign(static_cast<std::size_t>(cfg.num_vls * tx.words), 0);
      tx.voq = tx.voq_store.data();
      tx.nonempty = tx.nonempty_store.data();
      std::fill(tx.rr_input.begin(), tx.rr_input.begin() + cfg.num_vls,
                static_cast<std::uint16_t>(node.radix - 1));
      if (!arb_high.empty()) tx.high.left = arb_high[0].weight;
      tx.low.left = arb_low[0].weight;
      switches[tx.owner].tx_of_port[static_cast<std::size_t>(me.port - 1)] = idx;
    } else {
      hcas[tx.owner].tx = idx;
      const auto cap = static_cast<std::uint64_t>(std::llround(cfg.hca_rate_gbps * 1e9));
      if (cap != 0 && cap < tx.rate_bps) { // a cap at or above the link rate never binds
        tx.cap_bps = cap;
        tx.capped = true;
      }
    }
    return idx;
  }

  // ---------------------------------------------------------------- packets
  std::uint32_t alloc() {
    std::uint32_t i;
    if (!free_list.empty()) {
      i = free_list.back();
      free_list.pop_back();
      pool[i] = Packet{};
    } else {
      i = static_cast<std::uint32_t>(pool.size());
      pool.emplace_back();
    }
    if (++in_flight > peak_in_flight) peak_in_flight = in_flight;
    return i;
  }
  void release(std::uint32_t i) {
    free_list.push_back(i);
    --in_flight;
  }
  // FIFO links without data-dependent branches (masks, not ?:, which compilers turn into branches).
  void fifo_push(Fifo& f, std::uint32_t p) {
    pool[p].next = kNil;
    pool[f.tail].next = p; // the sentinel's link when empty: never read
    const std::uint32_t was_empty = 0u - static_cast<std::uint32_t>(f.tail == kSentinelPacket);
    f.head = (p & was_empty) | (f.head & ~was_empty);
    f.tail = p;
  }
  std::uint32_t fifo_pop(Fifo& f) {
    const std::uint32_t p = f.head;
    f.head = pool[p].next;
    f.tail &= 0u - static_cast<std::uint32_t>(f.head != kNil); // the sentinel (0) when it emptied
    pool[p].next = kNil;
    return p;
  }

  // ---------------------------------------------------------------- transmitters
  void kick(Tx& tx) {
    if (tx.busy) {
      if (!tx.quiet_end) return;
      if (sim.now() < tx.busy_until) {
        if (!tx.owner_is_switch) // an HCA: something changed (a message, an ACK to send): select at the end
          arm_wake(tx, tx.busy_until);
        else if (!tx.incoming.empty()) // (an earlier wake, e.g. one for a packet already absorbed)
          arm_wake(tx, std::max(tx.incoming.front_t(), tx.busy_until));
        return;
      }
      tx.busy = false; // the quiet transmission is over (start_tx returned its credits already)
      tx.quiet_end = false;
      tx.quiet_need = 0;
    }
    if (tx.gate > sim.now()) { // HCA injection cap: not yet
      hcas[tx.owner].pacer->request(tx.gate);
      return;
    }
    if (tx.creditq.front_t() <= sim.now()) absorb_credits(tx);
    if (tx.incoming.front_t() <= sim.now()) {
      // One packet due at an output with empty queues: it is the only candidate, so it goes straight to
      // the wire (what enqueueing it and selecting it again would do, without the queue round trip).
      if (direct_start && tx.queued_packets == 0 &&
          (tx.incoming.size() == 1 || tx.incoming.at(1).t > sim.now()) && start_direct(tx))
        return;
      absorb_arrivals(tx);
    }
    tx.credit_blocked = false;
    const std::uint32_t p = tx.owner_is_switch ? select_switch(tx) : select_hca(tx);
    if (p == kNil) {
      if (tx.owner_is_switch) tx.credit_blocked = tx.queued_packets > 0;
      tx.waiting = tx.credit_blocked;
      if (tx.credit_blocked) {
        if (!tx.stalled) {
          tx.stalled = true;
          tx.stall_since = sim.now();
        }
        if (!tx.creditq.empty()) arm_credits(tx);
      }
      if (!tx.incoming.empty()) arm_wake(tx, tx.incoming.front_t());
      return;
    }
    tx.waiting = false;
    start_tx(tx, p);
  }

  /// kick's shortcut: `tx`'s only due packet (the head of `incoming`; its queues are empty) starts now if it
  /// fits the credits. Same state as absorb_arrivals + select_switch would leave (input port and VL, peak
  /// queue, round-robin position). Returns false, changing nothing, when the credits are short.
  bool start_direct(Tx& tx) {
    const LineItem it = tx.incoming.front();
    Packet& p = pool[it.a];
    if (p.vl != single_arb_vl ||
        tx.credits[p.vl] < static_cast<std::int64_t>(PacketConfig::credits_for(p.wire)))
      return false;
    tx.incoming.pop_front();
    p.in_port = static_cast<std::uint16_t>(it.b);
    p.in_vl = p.vl;
    if (p.wire > tx.peak_queue) tx.peak_queue = p.wire; // (queued alone for an instant)
    tx.rr_input[p.vl] = static_cast<std::uint16_t>(it.b - 1);
    tx.credit_blocked = false;
    tx.waiting = false;
    start_tx(tx, it.a);
    return true;
  }

  /// Applies the credit returns that have reached `tx` by now.
  void absorb_credits(Tx& tx) {
    const Time now = sim.now();
    while (tx.creditq.front_t() <= now) {
      const LineItem& it = tx.creditq.front();
      tx.credits[it.a] += static_cast<std::int32_t>(it.b); // signed: a PFC pause subtracts
      tx.creditq.pop_front();
    }
  }
  /// A kCredits event for the earliest credit return on its way, unless one is pending for that time or
  /// earlier (an earlier return can join the line later: quiet ends return credits ahead, see start_tx).
  void arm_credits(Tx& tx) {
    const Time t = tx.quiet_need == 0 ? tx.creditq.front_t() : quiet_credit_time(tx);
    if (t >= tx.credit_at) return;
    tx.credit_at = t;
    sim.post(t, tx.id(), kCredits);
  }
  /// Credits leave the peer's input buffer at `left` (>= now) and reach `tx` one cable delay later.
  [[gnu::always_inline]] void push_credits_at(Tx& tx, Time left, std::uint32_t vl, std::uint32_t wire) {
    tx.creditq.insert_sorted({left + tx.ctrl_delay, vl, PacketConfig::credits_for(wire)});
    if (tx.waiting) arm_credits(tx);
  }
  [[gnu::always_inline]] void push_credits(Tx& tx, std::uint32_t vl, std::uint32_t wire) {
    push_credits_at(tx, sim.now(), vl, wire);
  }
  /// PFC: the peer switch of `tx` sends XOFF (pause) or XON for priority `vl`; it reaches `tx` after the
  /// frame's serialization and the propagation (Tx::ctrl_delay), on the same line as the credits.
  void send_pause(Tx& tx, std::uint32_t vl, bool pause) {
    const Time now = sim.now();
    tx.creditq.insert_sorted(
        {now + tx.ctrl_delay, vl, static_cast<std::uint32_t>(pause ? -kPfcPause : kPfcPause)});
    if (tx.waiting) arm_credits(tx);
    const std::uint32_t bit = 1u << vl;
    if (pause) {
      tx.pfc_paused |= bit;
      tx.pause_since[vl] = now;
    } else {
      tx.pfc_paused &= ~bit;
      tx.stats.pause_time += now - tx.pause_since[vl]; // both frames take the same delay to arrive
    }
    tx.stats.pause_frames++;
    stats.pause_frames++;
  }
  /// When `tx` will hold `need` credits on `vl`, counting the returns on their way in its credit line: now if
  /// it does already, Time::max() if the line does not bring enough.
  Time credits_reach(const Tx& tx, std::uint8_t vl, std::int64_t need) const {
    std::int64_t c = tx.credits[vl];
    if (c >= need) return sim.now();
    for (std::uint32_t i = 0, n = tx.creditq.size(); i < n; ++i) {
      const LineItem& it = tx.creditq.at(i);
      if (it.a != vl) continue;
      c += it.b;
      if (c >= need) return it.t;
    }
    return Time::max();
  }
  /// A quiet HCA (quiet_need != 0): when the credit returns on their way bring enough for its next packet,
  /// but not before its transmission ends; Time::max() if they do not.
  Time quiet_credit_time(const Tx& tx) const {
    return std::max(credits_reach(tx, tx.quiet_vl, tx.quiet_need), tx.busy_until);
  }
  /// start_tx on an HCA port whose transmission ends at `end`: the credits its next packet needs when the
  /// selection at `end` (select_hca) would certainly find that packet short of credits, else 0. Certain only
  /// in the plain case: no ACK/NAK queued, one active role (a requester in the middle of a WRITE or SEND that
  /// is ready), and the credits now plus the returns that reach the port by `end` fall short. Sets quiet_vl.
  [[gnu::noinline]] std::uint32_t blocked_next(Tx& tx, Time end) {
    const Hca& hca = hcas[tx.owner];
    if (!hca.ctrl.empty() || hca.active.size() != 1 || (hca.active[0] & 1u) != 0) return 0;
    const Qp& qp = qps[hca.active[0] >> 1];
    if (qp.cur_msg == kNil) return 0;
    const Msg& m = msgs[qp.cur_msg];
    const MessageSpec& s = m.rec.spec;
    if (s.verb == Verb::Read || std::max(m.rec.posted + cfg.nic_tx_latency, qp.next_send_time) > end)
      return 0;
    const std::uint32_t need = PacketConfig::credits_for(request_wire(s, qp.send_off));
    const std::uint8_t vl = vl_of(s.sl);
    if (credits_reach(tx, vl, need) <= end) return 0;
    tx.quiet_vl = vl;
    return need;
  }
  void credit_wake(Tx& tx) {
    if (sim.now() >= tx.credit_at) tx.credit_at = Time::max(); // (a later, superseded one just kicks again)
    if (tx.quiet_need != 0 && sim.now() < tx.busy_until) { // (superseded, before the quiet transmission ends)
      arm_credits(tx);
      return;
    }
    kick(tx);
  }

  void start_tx(Tx& tx, std::uint32_t pi) {
    Packet& p = pool[pi];
    const Time now = sim.now();
    if (tx.stalled) {
      tx.stats.credit_stall += now - tx.stall_since;
      tx.stalled = false;
    }
    tx.busy = true;
    tx.current = pi;
    tx.cur_in_port = p.in_port;
    tx.cur_in_vl = p.in_vl;
    tx.cur_wire = p.wire;
    auto& cr = tx.credits[p.vl];
    cr -= PacketConfig::credits_for(p.wire);
    if (cr < stats.min_credits_seen) stats.min_credits_seen = cr;
    // Exact serialization: bits * 1e12 / rate, the remainder carried to the next packet of this port.
    Time ser;
    if (tx.ps_per_byte != 0) {
      ser = Time::ps(static_cast<std::int64_t>(p.wire * tx.ps_per_byte));
    } else {
      // wire < 2^32 B and carry < rate: 64 bits hold wire * 8e12 + carry while wire < 2^21 B.
      if (p.wire < (1u << 21)) {
        const std::uint64_t num = std::uint64_t{p.wire} * 8'000'000'000'000ull + tx.carry;
        ser = Time::ps(static_cast<std::int64_t>(num / tx.rate_bps));
        tx.carry = num % tx.rate_bps;
      } else {
        const unsigned __int128 num =
            static_cast<unsigned __int128>(p.wire) * 8'000'000'000'000ull + tx.carry;
        ser = Time::ps(static_cast<std::int64_t>(num / tx.rate_bps));
        tx.carry = static_cast<std::uint64_t>(num % tx.rate_bps);
      }
    }
    if (tx.capped) { // HCA injection cap: the next start is wire x 8 / cap later, remainder carried
      const unsigned __int128 num =
          static_cast<unsigned __int128>(p.wire) * 8'000'000'000'000ull + tx.cap_carry;
      tx.gate = now + Time::ps(static_cast<std::int64_t>(num / tx.cap_bps));
      tx.cap_carry = static_cast<std::uint64_t>(num % tx.cap_bps);
    }
    Time end = now + ser;
    if (p.tail > end) end = p.tail; // cut-through: cannot finish before the tail has arrived
    if (bit_errors && !p.corrupted) {
      const double ok = std::pow(1.0 - cfg.bit_error_rate, 8.0 * p.wire);
      const double u = static_cast<double>(ber_rng->next_u64() >> 11) * 0x1.0p-53;
      if (u >= ok) p.corrupted = true;
    }
    const Time deliver = tx.peer_is_switch ? now + tx.prop + cfg.switch_latency : end + tx.prop;
    p.tail = end + tx.prop;
    tx.sent_packets++;
    tx.sent_bytes += p.wire;
    tx.busy_time += end - now;
    stats.packet_hops++;
    if (incoming_shortcut && tx.owner_is_switch && tx.queued_packets == 0 && tx.incoming.front_t() > end) {
      // Nothing is waiting for this output, and nothing reaches it before `end`: kTxDone would only return
      // the credits and find the port idle. So the credits go back now, timed for `end`, and no event is
      // scheduled; a packet that later joins `incoming` wakes the port at max(its arrival, end).
      tx.quiet_end = true;
      tx.busy_until = end;
      return_credits_at(switches[tx.owner], end, p.in_port, p.in_vl, p.wire);
      if (!tx.incoming.empty()) arm_wake(tx, tx.incoming.front_t());
    } else if (hca_quiet && !tx.owner_is_switch && cr < max_pkt_credits &&
               (tx.quiet_need = blocked_next(tx, end)) != 0) {
      // An HCA whose next packet will not fit the credits at `end` (looked at only when this packet's VL has
      // less than the largest packet's credits left): kTxDone would find it blocked and wait for credits. So
      // it waits for them now: it counts as stalled from `end`, and its kCredits event is armed for when
      // enough credits will have come back (not before `end`). Anything that changes its state meanwhile (a
      // message, an ACK to send) kicks it, and kick then looks again at `end`.
      tx.quiet_end = true;
      tx.busy_until = end;
      tx.waiting = true;
      tx.credit_blocked = true;
      tx.stalled = true;
      tx.stall_since = end;
      arm_credits(tx);
    } else {
      sim.post(end, tx.id(), kTxDone);
    }
    if (tx.peer_is_switch && incoming_shortcut && !p.corrupted) {
      // Static routing: the packet's output at the next switch is known now; it waits in that output's
      // `incoming` list instead of costing an arrival event (see Tx::incoming).
      Tx& out = route_static(tx.peer_owner, p);
      out.incoming.insert_sorted({deliver, pi, static_cast<std::uint32_t>(tx.peer_port)});
      if (!out.busy) {
        arm_wake(out, deliver);
      } else if (out.quiet_end) {
        arm_wake(out, std::max(deliver, out.busy_until));
      }
    } else {
      tx.wire.push_back({deliver, pi, 0});
      if (tx.wire.size() == 1) sim.post(deliver, tx.id(), kArrival);
    }
  }

  [[gnu::noinline]] void tx_done(Tx& tx) {
    tx.busy = false;
    const std::uint32_t pi = tx.current;
    tx.current = kNil;
    // The packet has left this switch: its input buffer space goes back upstream. (From what start_tx
    // recorded: with cut-through the packet may already have reached the next switch, which rewrites its
    // input port and VL.)
    if (tx.owner_is_switch && pi != kNil)
      return_credits(switches[tx.owner], tx.cur_in_port, tx.cur_in_vl, tx.cur_wire);
    kick(tx);
  }

  /// Without PFC: the credits of a packet that leaves switch `sw` at `left` (>= now), from input `in_port`.
  void return_credits_at(const Switch& sw, Time left, int in_port, int vl, std::uint32_t wire) {
    Tx& up = *txs[sw.up_tx[static_cast<std::size_t>(in_port - 1)]];
    push_credits_at(up, left, static_cast<std::uint32_t>(vl), wire);
  }
  void return_credits(const Switch& sw, int in_port, int vl, std::uint32_t wire) {
    Tx& up = *txs[sw.up_tx[static_cast<std::size_t>(in_port - 1)]];
    push_credits(up, static_cast<std::uint32_t>(vl), wire);
    if (pfc_on) {
      up.pfc_in[vl] -= wire;
      if ((up.pfc_paused >> vl & 1u) && up.pfc_in[vl] <= up.pfc_xon)
        send_pause(up, static_cast<std::uint32_t>(vl), false);
    }
  }

  /// The packets on `tx`'s cable that have reached the peer by now, in order.
  [[gnu::noinline]] void arrivals(Tx& tx) {
    const Time now = sim.now();
    do {
      const std::uint32_t pi = tx.wire.front().a;
      tx.wire.pop_front();
      if (tx.peer_is_switch)
        arrive_switch(tx.peer_owner, tx.peer_port, pi);
      else
        arrive_hca(tx.peer_owner, tx, pi);
    } while (tx.wire.front_t() <= now);
    if (!tx.wire.empty()) sim.post(tx.wire.front_t(), tx.id(), kArrival);
  }

  void notify_deliver(const LineItem& it) {
    Msg& m = msgs[it.a];
    if (it.b == 0) {
      m.rec.delivered = sim.now();
      m.rec.is_delivered = true;
      if (delivered_cb) delivered_cb(m.rec);
    } else {
      m.rec.acked = sim.now();
      m.rec.is_acked = true;
      if (acked_cb) acked_cb(m.rec);
    }
  }

  // ---------------------------------------------------------------- switches
  /// Static routing: the output a packet arriving at switch `s` will take (throws when there is none).
  Tx& route_static(std::uint32_t s, const Packet& p) {
    if (!lft_tx.empty()) {
      const std::uint32_t t = lft_tx[s * lft_stride + p.dst];
      if (t == kNil) [[unlikely]]
        throw_no_route(switches[s], p);
      return *txs[t];
    }
    const Switch& sw = switches[s];
    const routing::Port out = tables.next_hop(sw.node, p.dst);
    if (out == routing::kNoPort || sw.tx_of_port[out - 1] == kNil) throw_no_route(sw, p);
    return *txs[sw.tx_of_port[out - 1]];
  }
  [[noreturn]] void throw_no_route(const Switch& sw, const Packet& p) const {
    throw std::runtime_error("switch '" + fabric.node(sw.node).name + "' has no route to HCA '" +
                             fabric.node(tables.hca_nodes()[p.dst]).name + "'");
  }

  /// Moves the packets that have reached `tx`'s switch by now from `incoming` into the virtual output queues,
  /// in arrival order, as their arrival events would have.
  void absorb_arrivals(Tx& tx) {
    const Time now = sim.now();
    while (tx.incoming.front_t() <= now) {
      const LineItem it = tx.incoming.front();
      tx.incoming.pop_front();
      enqueue_at_switch(tx.owner, static_cast<int>(it.b), it.a, tx);
      if (tx.queued_bytes > tx.peak_queue) tx.peak_queue = tx.queued_bytes;
    }
  }
  void arm_wake(Tx& tx, Time t) {
    if (t >= tx.wake_at) return;
    tx.wake_at = t;
    sim.post(t, tx.id(), kWake);
  }
  void arrival_wake(Tx& tx) {
    if (sim.now() >= tx.wake_at) tx.wake_at = Time::max(); // (a later, superseded wake just kicks again)
    kick(tx);
  }

  void arrive_switch(std::uint32_t s, int in_port, std::uint32_t pi) {
    Packet& p = pool[pi];
    Switch& sw = switches[s];
    if (p.corrupted) { // VCRC fails: dropped here, its buffer space returned
      stats.packets_corrupted++;
      push_credits(*txs[sw.up_tx[static_cast<std::size_t>(in_port - 1)]], p.vl, p.wire);
      release(pi);
      return;
    }
    if (pfc_on) {
      Tx& up = *txs[sw.up_tx[static_cast<std::size_t>(in_port - 1)]];
      if (up.pfc_in[p.vl] + p.wire > up.pfc_limit) { // headroom exceeded: the packet is lost
        stats.pfc_drops++;
        up.stats.pfc_drops++;
        push_credits(up, p.vl, p.wire);
        release(pi);
        return;
      }
      up.pfc_in[p.vl] += p.wire;
      if (!(up.pfc_paused >> p.vl & 1u) && up.pfc_in[p.vl] > up.pfc_xoff) send_pause(up, p.vl, true);
    }
    Tx* out;
    if (static_routing) {
      out = &route_static(s, p);
    } else {
      const routing::Port port = choose_port(sw, p.dst);
      if (port == routing::kNoPort || sw.tx_of_port[port - 1] == kNil) throw_no_route(sw, p);
      out = txs[sw.tx_of_port[port - 1]];
    }
    enqueue_at_switch(s, in_port, pi, *out);
    if (out->queued_bytes > out->peak_queue) out->peak_queue = out->queued_bytes;
    kick(*out);
  }

  /// Puts packet `pi`, arriving on `in_port` of switch `s`, into output `tx`'s virtual output queue.
  [[gnu::always_inline]] void enqueue_at_switch(std::uint32_t s, int in_port, std::uint32_t pi, Tx& tx) {
    Packet& p = pool[pi];
    const Switch& sw = switches[s];
    p.in_port = static_cast<std::uint16_t>(in_port);
    p.in_vl = p.vl;
    if (per_global_hop_vl) {
      const topo::NodeId from = txs[sw.tx_of_port[in_port - 1]]->peer;
      const auto& fn = fabric.node(from);
      if ((fn.kind == topo::NodeKind::Switch || fn.kind == topo::NodeKind::Router) &&
          fn.group != fabric.node(sw.node).group && p.vl + 1 < cfg.num_vls)
        ++p.vl;
    }
    const std::size_t q = static_cast<std::size_t>(p.vl) * tx.radix + (in_port - 1);
    fifo_push(tx.voq[q], pi);
    const auto in = static_cast<unsigned>(in_port - 1); // (unsigned: / and % are a shift and a mask)
    tx.nonempty[static_cast<std::size_t>(p.vl) * tx.words + in / 64] |= 1ull << (in % 64);
    if (mark_enqueue) mark(tx, p, tx.queued_bytes);
    tx.queued_bytes += p.wire;
    tx.queued_packets++;
  }

  /// The congestion point: marks data packet `p` leaving or joining output `tx` whose queue is `q` bytes
  /// (excluding `p`): DCQCN's RED-like CE marking or IB CC's FECN above the port threshold.
  void mark(Tx& tx, Packet& p, std::uint64_t q) {
    if (p.kind != Kind::Data) return;
    if (cc_dcqcn) {
      if (q <= tx.ecn_kmin) return;
      // p(q) = Pmax (q - Kmin) / (Kmax - Kmin) for Kmin < q <= Kmax, 1 above Kmax.
      const bool m =
          q > tx.ecn_kmax || ecn_rng->uniform01() < cfg.dcqcn.pmax * static_cast<double>(q - tx.ecn_kmin) /
                                                        static_cast<double>(tx.ecn_kmax - tx.ecn_kmin);
      if (!m || (p.flags & kFlagCe)) return;
      p.flags |= kFlagCe;
      tx.stats.ecn_marks++;
      stats.ecn_marks++;
    } else {
      if (q <= cfg.ibcc.threshold_bytes || p.wire < cfg.ibcc.min_packet_bytes) return;
      if (tx.fecn_count < cfg.ibcc.marking_rate) {
        ++tx.fecn_count;
        return;
      }
      tx.fecn_count = 0;
      if (p.flags & kFlagFecn) return;
      p.flags |= kFlagFecn;
      tx.stats.fecn_marks++;
      stats.fecn_marks++;
    }
  }

  std::uint64_t load_of(const Switch& sw, routing::Port port) const {
    const std::uint32_t t = sw.tx_of_port[port - 1];
    if (t == kNil) return ~std::uint64_t{0};
    const Tx& tx = *txs[t];
    return tx.queued_bytes + (tx.busy ? pool[tx.current].wire : 0);
  }

  routing::Port choose_port(const Switch& sw, HcaIndex dst) {
    if (cfg.ar_mode == ArMode::Off) return tables.next_hop(sw.node, dst);
    const routing::ArGroupView g = tables.ar_group(sw.node, dst);
    if (g.size() <= 1) return g.empty() ? routing::kNoPort : g.static_port();
    const std::uint64_t key = (static_cast<std::uint64_t>(sw.node) << 32) | dst;
    if (cfg.ar_mode == ArMode::Bounded) {
      auto it = ar_bind.find(key);
      if (it != ar_bind.end() && sim.now() - it->second.second < cfg.ar_bound_window) return it->second.first;
    }
    // Least queued bytes; ties keep the earlier port in the group (the static port first).
    routing::Port best = g[0];
    std::uint64_t best_load = load_of(sw, best);
    for (std::size_t i = 1; i < g.size(); ++i) {
      const std::uint64_t l = load_of(sw, g[i]);
      if (l < best_load) {
        best = g[i];
        best_load = l;
      }
    }
    if (cfg.ar_mode == ArMode::Bounded) ar_bind[key] = {best, sim.now()};
    return best;
  }

  /// The input whose head packet on `vl` this output serves next (round-robin from the last one served,
  /// among heads that fit the credits), or -1. Walks the set bits of the non-empty mask only.
  [[gnu::always_inline]] int candidate_input(const Tx& tx, int vl) const {
    const std::uint64_t* mask = &tx.nonempty[static_cast<std::size_t>(vl) * tx.words];
    const std::int64_t cr = tx.credits[static_cast<std::size_t>(vl)];
    const Fifo* voq = &tx.voq[static_cast<std::size_t>(vl) * tx.radix];
    int from = tx.rr_input[static_cast<std::size_t>(vl)] + 1; // after the last one served, wrapping
    if (from >= tx.radix) from = 0;
    if (tx.words == 1) {
      // Radix <= 64: rotate the mask right by `from`, so that its set bits, lowest first, are the non-empty
      // inputs in round-robin order (bits at and above the radix are zero).
      for (std::uint64_t bits = std::rotr(mask[0], from); bits != 0; bits &= bits - 1) {
        const int in = (std::countr_zero(bits) + from) & 63;
        if (cr >= static_cast<std::int64_t>(PacketConfig::credits_for(pool[voq[in].head].wire))) return in;
      }
      return -1;
    }
    // First [from, radix), then [0, from): inputs in round-robin order.
    for (int pass = 0; pass < 2; ++pass) {
      const int lo = pass == 0 ? from : 0;
      const int hi = pass == 0 ? tx.radix : from;
      for (int w = lo / 64; w * 64 < hi; ++w) {
        std::uint64_t bits = mask[w];
        if (w == lo / 64) bits &= ~std::uint64_t{0} << (lo % 64);
        while (bits != 0) {
          const int in = w * 64 + std::countr_zero(bits);
          if (in >= hi) break;
          if (cr >= static_cast<std::int64_t>(PacketConfig::credits_for(pool[voq[in].head].wire))) return in;
          bits &= bits - 1;
        }
      }
    }
    return -1;
  }

  /// Weighted round-robin over one VL arbitration table (IBA 7.6.9): the current entry keeps the grant
  /// until its weight (64-byte units) is spent or its VL has nothing that can go. Returns the VL or -1.
  int wrr_pick(const std::vector<VlArbEntry>& table, Tx::Arb& st, const Tx& tx, int& input) const {
    const std::size_t n = table.size();
    for (std::size_t k = 0; k < n; ++k) {
      const VlArbEntry& e = table[st.pos];
      if (e.weight > 0 && st.left > 0) {
        input = candidate_input(tx, e.vl);
        if (input >= 0) return e.vl;
      }
      st.pos = st.pos + 1 == n ? 0 : st.pos + 1;
      st.left = table[st.pos].weight;
    }
    return -1;
  }

  std::uint32_t select_switch(Tx& tx) {
    if (tx.queued_packets == 0) return kNil;
    int input = -1, vl = -1;
    bool high = false;
    if (single_arb_vl >= 0) { // one data VL, one low-table entry: nothing to arbitrate between VLs
      input = candidate_input(tx, single_arb_vl);
      if (input < 0) return kNil;
      vl = single_arb_vl;
    } else if (!arb_high.empty()) {
      const bool over_limit =
          cfg.vl_high_limit != 255 && tx.high_bytes >= static_cast<std::uint64_t>(cfg.vl_high_limit) * 4096u;
      Tx::Arb probe = tx.low;
      int low_input = -1;
      const bool low_waiting = over_limit && wrr_pick(arb_low, probe, tx, low_input) >= 0;
      if (!low_waiting) {
        vl = wrr_pick(arb_high, tx.high, tx, input);
        high = vl >= 0;
      }
    }
    if (vl < 0) vl = wrr_pick(arb_low, tx.low, tx, input);
    if (vl < 0) return kNil;
    Fifo& f = tx.voq[static_cast<std::size_t>(vl) * tx.radix + input];
    const std::uint32_t pi = fifo_pop(f);
    if (f.empty())
      tx.nonempty[static_cast<std::size_t>(vl) * tx.words + static_cast<unsigned>(input) / 64] &=
          ~(1ull << (static_cast<unsigned>(input) % 64));
    tx.rr_input[static_cast<std::size_t>(vl)] = static_cast<std::uint16_t>(input);
    const std::uint32_t wire = pool[pi].wire;
    tx.queued_bytes -= wire;
    tx.queued_packets--;
    if (mark_dequeue) mark(tx, pool[pi], tx.queued_bytes);
    if (single_arb_vl >= 0) return pi; // no VL arbitration state to keep (one table entry, never switched)
    Tx::Arb& st = high ? tx.high : tx.low;
    const auto& table = high ? arb_high : arb_low;
    st.left -= static_cast<int>(PacketConfig::credits_for(wire));
    if (st.left <= 0) { // weight spent: the next entry gets the grant
      st.pos = st.pos + 1 == table.size() ? 0 : st.pos + 1;
      st.left = table[st.pos].weight;
    }
    tx.high_bytes = high ? tx.high_bytes + wire : 0;
    return pi;
  }

  // ---------------------------------------------------------------- HCAs
  Qp& qp_of(HcaIndex src, HcaIndex dst, std::uint32_t slot, std::uint32_t* index = nullptr) {
    const std::uint64_t key =
        (static_cast<std::uint64_t>(src) << 40) ^ (static_cast<std::uint64_t>(dst) << 16) ^ slot;
    auto it = qp_index.find(key);
    std::uint32_t q;
    if (it == qp_index.end()) {
      q = static_cast<std::uint32_t>(qps.size());
      Qp n;
      n.src = src;
      n.dst = dst;
      n.slot = slot;
      if (cc_dcqcn || cc_ibcc) init_cc(n);
      qps.push_back(std::move(n));
      qp_index.emplace(key, q);
      hcas[src].req_qps.push_back(q);
    } else {
      q = it->second;
    }
    if (index) *index = q;
    return qps[q];
  }

  // ---------------------------------------------------------------- congestion control at the HCAs
  /// The rate the requester's CC starts from: its link rate, or the injection cap when lower.
  double line_bps(HcaIndex h) const {
    if (hcas[h].tx == kNil) return 0;
    const Tx& t = *txs[hcas[h].tx];
    return static_cast<double>(t.cap_bps != 0 ? t.cap_bps : t.rate_bps);
  }
  void init_cc(Qp& qp) {
    const double line = line_bps(qp.src);
    if (cc_dcqcn) {
      const double scale = cfg.dcqcn.scale_ref_gbps > 0 ? line / (cfg.dcqcn.scale_ref_gbps * 1e9) : 1.0;
      qp.rp = DcqcnRp(cfg.dcqcn, std::max(line, 1.0), scale);
    }
    if (cc_ibcc) qp.ib = IbCcRp(cfg.ibcc);
    if (cfg.trace_rates) {
      qp.trace = static_cast<std::uint32_t>(rate_traces.size());
      rate_traces.push_back({qp.src, qp.dst, qp.slot, {{sim.now(), line / 1e9}}});
    }
  }
  IbCcRp& ib_state(Qp& qp, std::uint8_t sl) { return cfg.ibcc.per_sl ? sl_cc[qp.src][sl & 15u] : qp.ib; }
  /// Time for a full-MTU packet at the requester's rate (IB CC's T_maxpkt), in ps.
  std::int64_t t_maxpkt_ps(HcaIndex h) const {
    return serialization_time(cfg.mtu_bytes + cfg.header_bytes, static_cast<std::uint64_t>(line_bps(h)))
        .count_ps();
  }
  std::int64_t ipd_ps(HcaIndex h, int ccti) const {
    const CctEntry& e = cct[static_cast<std::size_t>(ccti)];
    return (t_maxpkt_ps(h) >> e.shift) * e.multiplier;
  }
  void trace_rate(const Qp& qp, double bps) {
    if (qp.trace == kNil) return;
    auto& pts = rate_traces[qp.trace].rate_gbps;
    if (!pts.empty() && pts.back().value == bps / 1e9) return;
    pts.push_back({sim.now(), bps / 1e9});
  }
  double ibcc_rate_bps(const Qp& qp, int ccti) const {
    const double line = line_bps(qp.src);
    if (ccti == 0) return line;
    const double t = static_cast<double>(t_maxpkt_ps(qp.src));
    return line * t / (t + static_cast<double>(ipd_ps(qp.src, ccti)));
  }
  /// DCQCN: after a rate change, a QP that waits for its pacing gap waits the rest at the new rate.
  void dcqcn_rate_changed(Qp& qp, double old_bps) {
    const double r = qp.rp.rate_bps();
    if (r == old_bps) return;
    const Time now = sim.now();
    send_changed(qp);
    if (qp.next_send_time > now)
      qp.next_send_time = now + Time::ps(static_cast<std::int64_t>(
                                    static_cast<double>((qp.next_send_time - now).count_ps()) * old_bps / r));
    trace_rate(qp, r);
  }
  /// The requester sent `wire` bytes of data on `qp` at `now`: byte counter, and the next send time.
  void pace(Qp& qp, std::uint32_t wire, std::uint8_t sl, Time now) {
    if (cc_dcqcn) {
      const double old = qp.rp.rate_bps();
      qp.rp.on_sent(now, wire);
      dcqcn_rate_changed(qp, old);
      if (qp.rp.limited())
        qp.next_send_time =
            now + Time::ps(static_cast<std::int64_t>(static_cast<double>(wire) * 8e12 / qp.rp.rate_bps()));
    } else {
      IbCcRp& st = ib_state(qp, sl);
      st.advance(now);
      const int k = st.ccti();
      if (qp.trace != kNil) trace_rate(qp, ibcc_rate_bps(qp, k));
      if (k > 0)
        qp.next_send_time = now + serialization_time(wire, static_cast<std::uint64_t>(line_bps(qp.src))) +
                            Time::ps(ipd_ps(qp.src, k));
    }
  }
  /// A CNP (DCQCN) or BECN (IB CC) reaches the requester of QP q.
  void on_cnp(std::uint32_t q, std::uint8_t sl) {
    Qp& qp = qps[q];
    stats.cnps_received++;
    const Time now = sim.now();
    if (cc_dcqcn) {
      const double old = qp.rp.rate_bps();
      const std::uint64_t cuts = qp.rp.cuts();
      qp.rp.on_cnp(now);
      stats.rate_cuts += qp.rp.cuts() - cuts;
      dcqcn_rate_changed(qp, old);
    } else if (cc_ibcc) {
      IbCcRp& st = ib_state(qp, sl);
      st.on_becn(now);
      if (qp.trace != kNil) trace_rate(qp, ibcc_rate_bps(qp, st.ccti()));
    }
  }
  /// The notification point: a marked data packet of QP `p.qp` reached its responder `h`.
  void notify_congestion(HcaIndex h, const Packet& p) {
    Qp& qp = qps[p.qp];
    const Time now = sim.now();
    const std::uint8_t vl = vl_of(msgs[p.msg].rec.spec.sl);
    if ((p.flags & kFlagCe) && cc_dcqcn) {
      if (qp.last_cnp == Time::max() || now - qp.last_cnp >= Time::from_us(cfg.dcqcn.cnp_interval_us)) {
        qp.last_cnp = now;
        stats.cnps_sent++;
        send_ctrl(h, qp.src, p.qp, Kind::Cnp, msgs[p.msg].rec.spec.sl, vl,
                  cfg.header_bytes + cfg.dcqcn.cnp_bytes);
      }
    }
    if ((p.flags & kFlagFecn) && cc_ibcc) { // every FECN is answered by a BECN
      stats.becns_sent++;
      send_ctrl(h, qp.src, p.qp, Kind::Cnp, msgs[p.msg].rec.spec.sl, vl,
                cfg.header_bytes + cfg.ibcc.becn_bytes);
    }
  }

  void activate(HcaIndex h, std::uint32_t q, bool responder) {
    Qp& qp = qps[q];
    bool& flag = responder ? qp.resp_active : qp.req_active;
    if (!flag) {
      flag = true;
      hcas[h].active.push_back(q << 1 | (responder ? 1u : 0u));
    }
  }

  std::uint32_t npkts_of(std::uint64_t bytes) const {
    return bytes == 0 ? 1 : static_cast<std::uint32_t>((bytes + cfg.mtu_bytes - 1) / cfg.mtu_bytes);
  }

  MessageId post_now(const MessageSpec& s) {
    if (s.src >= hcas.size() || s.dst >= hcas.size())
      throw InputError("message endpoints out of range: src " + std::to_string(s.src) + ", dst " +
                       std::to_string(s.dst) + " (the fabric has " + std::to_string(hcas.size()) + " HCAs)");
    if (s.src == s.dst)
      throw InputError("a message needs two different HCAs (src == dst == " + std::to_string(s.src) + ")");
    if (hcas[s.src].tx == kNil || hcas[s.dst].tx == kNil || !tables.reachable(s.src, s.dst))
      throw InputError("HCA '" + fabric.node(hcas[s.src].node).name + "' cannot reach HCA '" +
                       fabric.node(hcas[s.dst].node).name + "' (different planes or uncabled)");
    if (s.verb == Verb::Read && s.bytes == 0) throw InputError("an RDMA READ of 0 bytes is not supported");
    std::uint32_t q = 0;
    Qp& qp = qp_of(s.src, s.dst, s.qp_slot, &q);
    const auto id = static_cast<MessageId>(msgs.size());
    Msg m;
    m.rec.id = id;
    m.rec.spec = s;
    m.rec.posted = sim.now();
    m.qp = q;
    m.npkts = npkts_of(s.bytes);
    msgs.push_back(m);
    qp.sendq.push_back(id);
    send_changed(qp);
    activate(s.src, q, false);
    hcas[s.src].pacer->request(sim.now() + cfg.nic_tx_latency);
    return id;
  }

  void hca_wake(HcaIndex h) {
    Hca& hca = hcas[h];
    const Time now = sim.now();
    Time next_rto = Time::max();
    for (std::uint32_t q : hca.req_qps) {
      Qp& qp = qps[q];
      if (qp.rto_deadline <= now) on_timeout(q);
      next_rto = std::min(next_rto, qp.rto_deadline);
    }
    kick(*txs[hca.tx]);
    if (next_rto != Time::max()) hca.timer->request(next_rto);
  }

  /// Which packet the HCA sends next: ACK/NAK first, then round-robin over active QPs.
  std::uint32_t select_hca(Tx& tx) {
    Hca& hca = hcas[tx.owner];
    if (!hca.ctrl.empty()) {
      if (!fits(tx, pool[hca.ctrl.head].wire, pool[hca.ctrl.head].vl)) return kNil;
      return fifo_pop(hca.ctrl);
    }
    const Time now = sim.now();
    Time wake = Time::max();
    std::size_t n = hca.active.size();
    for (std::size_t k = 0; k < n;) {
      if (hca.rr >= hca.active.size()) hca.rr = 0;
      const std::uint32_t entry = hca.active[hca.rr];
      const std::uint32_t q = entry >> 1;
      const bool responder = entry & 1u;
      Qp& qp = qps[q];
      std::uint32_t pi = kNil;
      bool done = false; // this role has no more work: drop it from the active list
      if (responder) {
        if (qp.reads.empty())
          done = true;
        else
          pi = make_read_response(q, tx);
      } else {
        pi = make_request(q, tx, now, wake, done);
      }
      if (done) {
        (responder ? qp.resp_active : qp.req_active) = false;
        hca.active.erase(hca.active.begin() + static_cast<std::ptrdiff_t>(hca.rr));
        --n;
        continue;
      }
      ++hca.rr;
      ++k;
      if (pi != kNil) return pi;
    }
    if (wake != Time::max()) hca.pacer->request(wake);
    return kNil;
  }

  std::uint8_t vl_of(std::uint8_t sl) const {
    return static_cast<std::uint8_t>(std::min<int>(sl, cfg.num_vls - 1));
  }

  bool fits(Tx& tx, std::uint32_t wire, std::uint8_t vl) const {
    const bool ok = tx.credits[vl] >= static_cast<std::int64_t>(PacketConfig::credits_for(wire));
    if (!ok) tx.credit_blocked = true;
    return ok;
  }

  std::uint32_t make_read_response(std::uint32_t q, Tx& tx) {
    Qp& qp = qps[q];
    ReadWork& w = qp.reads.front();
    const auto payload = static_cast<std::uint32_t>(std::min<std::uint64_t>(w.remaining, cfg.mtu_bytes));
    const std::uint32_t wire = payload + cfg.header_bytes;
    const std::uint8_t vl = vl_of(msgs[w.msg].rec.spec.sl);
    if (!fits(tx, wire, vl)) return kNil;
    const std::uint32_t pi = alloc();
    Packet& p = pool[pi];
    p.vl = vl;
    p.kind = Kind::ReadResp;
    p.qp = q;
    p.msg = w.msg;
    p.payload = payload;
    p.wire = wire;
    p.src = qp.dst;
    p.dst = qp.src;
    p.psn = w.sent_pkts++;
    w.remaining -= payload;
    p.last = w.remaining == 0;
    if (p.last) qp.reads.pop_front();
    stats.packets_injected++;
    return pi;
  }

  /// The requester's next packet on QP q, or kNil. Sets `done` when the QP has nothing left to send,
  /// and lowers `wake` to when it will have something.
  [[gnu::always_inline]] std::uint32_t make_request(std::uint32_t q, Tx& tx, Time now, Time& wake,
                                                    bool& done) {
    Qp& qp = qps[q];
    // Its next packet did not fit the credits and nothing about it has changed since (the answer below would
    // be the same: `ready` was already reached, a READ request was not held back by max_rd_atomic).
    if (qp.blocked_need != 0 && tx.credits[qp.blocked_vl] < static_cast<std::int64_t>(qp.blocked_need)) {
      tx.credit_blocked = true;
      return kNil;
    }
    qp.blocked_need = 0;
    std::uint32_t mi = qp.cur_msg;
    if (mi == kNil) {
      // Skip READs whose request is already out (after a go-back-N rewind).
      for (const std::size_t n = qp.sendq.size(); qp.send_pos < n; ++qp.send_pos, qp.send_off = 0) {
        const std::uint32_t cand = qp.sendq[qp.send_pos];
        const Msg& c = msgs[cand];
        if (c.rec.spec.verb != Verb::Read || !c.req_sent) {
          mi = cand;
          break;
        }
      }
      if (mi == kNil) {
        done = true;
        return kNil;
      }
      qp.cur_msg = mi;
    }
    Msg& m = msgs[mi];
    Time ready = std::max(m.rec.posted + cfg.nic_tx_latency, qp.next_send_time);
    if (ready > now && cc_dcqcn && qp.next_send_time > now) {
      // Paced: apply the timer increases due by now (lazy timers), then wait the rest at the new rate, and
      // come back at the next timer expiry if that is earlier.
      const double old = qp.rp.rate_bps();
      qp.rp.advance(now);
      dcqcn_rate_changed(qp, old);
      ready = std::max(m.rec.posted + cfg.nic_tx_latency, qp.next_send_time);
      if (ready > now && qp.rp.limited()) wake = std::min(wake, qp.rp.next_timer());
    }
    if (ready > now) {
      wake = std::min(wake, ready);
      return kNil;
    }
    const MessageSpec& s = m.rec.spec;
    if (s.verb == Verb::Read) {
      if (qp.reads_outstanding >= cfg.max_rd_atomic) return kNil; // resumes when a response completes
      const std::uint32_t wire = cfg.header_bytes + cfg.reth_bytes;
      if (!fits(tx, wire, vl_of(s.sl))) return blocked(qp, wire, vl_of(s.sl));
      const std::uint32_t pi = alloc();
      Packet& p = pool[pi];
      p.vl = vl_of(s.sl);
      p.kind = Kind::ReadReq;
      p.qp = q;
      p.msg = mi;
      p.wire = wire;
      p.src = qp.src;
      p.dst = qp.dst;
      p.last = true;
      m.req_sent = true;
      m.rec.first_tx = now;
      qp.reads_outstanding++;
      ++qp.send_pos;
      qp.send_off = 0;
      qp.cur_msg = kNil;
      stats.packets_injected++;
      return pi;
    }
    if (!m.psn_assigned) {
      m.first_psn = qp.next_psn;
      m.psn_assigned = true;
    }
    const std::uint64_t left = s.bytes - qp.send_off;
    const auto payload = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, cfg.mtu_bytes));
    const bool first = qp.send_off == 0;
    const bool last = left <= cfg.mtu_bytes;
    const std::uint32_t wire = request_wire(s, qp.send_off);
    if (!fits(tx, wire, vl_of(s.sl))) return blocked(qp, wire, vl_of(s.sl));
    const std::uint32_t pi = alloc();
    Packet& p = pool[pi];
    p.vl = vl_of(s.sl);
    p.kind = Kind::Data;
    p.qp = q;
    p.msg = mi;
    p.psn = qp.next_psn;
    p.payload = payload;
    p.wire = wire;
    p.src = qp.src;
    p.dst = qp.dst;
    p.last = last;
    if (first && qp.next_psn == m.first_psn && m.rec.retransmitted_packets == 0) m.rec.first_tx = now;
    if (qp.next_psn < qp.max_psn_sent) {
      m.rec.retransmitted_packets++;
      stats.retransmitted_packets++;
    } else {
      stats.payload_bytes_sent += payload;
    }
    ++qp.next_psn;
    qp.max_psn_sent = std::max(qp.max_psn_sent, qp.next_psn);
    qp.send_off += payload;
    if (last) {
      ++qp.send_pos;
      qp.send_off = 0;
      qp.cur_msg = kNil;
    }
    if (qp.rto_deadline == Time::max()) {
      qp.rto_deadline = now + cfg.ack_timeout;
      hcas[qp.src].timer->request(qp.rto_deadline);
    }
    if (cc_dcqcn || cc_ibcc) pace(qp, wire, s.sl, now);
    stats.packets_injected++;
    return pi;
  }

  /// Bytes on the wire of the WRITE/SEND packet that starts `off` bytes into message `s`.
  std::uint32_t request_wire(const MessageSpec& s, std::uint64_t off) const {
    const std::uint64_t left = s.bytes - off;
    std::uint32_t wire =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(left, cfg.mtu_bytes)) + cfg.header_bytes;
    if (off == 0 && s.verb != Verb::Send) wire += cfg.reth_bytes;
    if (left <= cfg.mtu_bytes && s.verb == Verb::WriteImm) wire += 4; // immediate data
    return wire;
  }
  /// make_request's answer when the next packet of `qp` (`wire` bytes on `vl`) does not fit the credits.
  static std::uint32_t blocked(Qp& qp, std::uint32_t wire, std::uint8_t vl) {
    qp.blocked_need = PacketConfig::credits_for(wire);
    qp.blocked_vl = vl;
    return kNil;
  }
  /// Forgets make_request's memo of `qp` (its send queue, send position, next send time or READs in
  /// flight changed).
  static void send_changed(Qp& qp) {
    qp.cur_msg = kNil;
    qp.blocked_need = 0;
  }

  void send_ctrl(HcaIndex from, HcaIndex to, std::uint32_t q, Kind kind, std::uint32_t psn, std::uint8_t vl,
                 std::uint32_t wire = 0) {
    const std::uint32_t pi = alloc();
    Packet& p = pool[pi];
    p.vl = vl;
    p.kind = kind;
    p.qp = q;
    p.psn = psn;
    p.wire = wire != 0 ? wire : cfg.header_bytes + cfg.ack_payload_bytes;
    p.src = from;
    p.dst = to;
    fifo_push(hcas[from].ctrl, pi);
    kick(*txs[hcas[from].tx]);
  }

  void arrive_hca(HcaIndex h, Tx& from, std::uint32_t pi) {
    Packet& p = pool[pi];
    // The HCA drains its receive buffer at line rate: credits go back as soon as the packet has arrived.
    push_credits(from, p.vl, p.wire);
    if (p.corrupted) { // ICRC/VCRC fails: dropped; go-back-N or the timeout recovers
      stats.packets_corrupted++;
      release(pi);
      return;
    }
    stats.packets_delivered++;
    const Packet pk = p;
    release(pi);
    switch (pk.kind) {
    case Kind::Data:
      on_data(h, pk);
      break;
    case Kind::Ack:
      on_ack(pk.qp, pk.psn);
      break;
    case Kind::Nak:
      on_nak(pk.qp, pk.psn);
      break;
    case Kind::ReadReq:
      on_read_request(h, pk);
      break;
    case Kind::ReadResp:
      on_read_response(pk);
      break;
    case Kind::Cnp:
      on_cnp(pk.qp, static_cast<std::uint8_t>(pk.psn)); // a CNP's PSN field carries the SL here
      break;
    }
  }

  /// Places a packet's payload; returns true when it completed its message.
  bool accept(const Packet& p) {
    Msg& m = msgs[p.msg];
    m.recv_pkts++;
    m.recv_bytes += p.payload;
    stats.payload_bytes_delivered += p.payload;
    if (m.recv_pkts != m.npkts) return false;
    notify->push(sim.now() + cfg.nic_rx_latency, p.msg, 0);
    return true;
  }

  void on_data(HcaIndex h, const Packet& p) {
    if (p.flags != 0) notify_congestion(h, p);
    Qp& qp = qps[p.qp];
    const bool ooo = cfg.ar_mode != ArMode::Off;
    bool ack_now = p.last;
    if (p.psn == qp.epsn) {
      ack_now |= accept(p);
      ++qp.epsn;
      qp.nak_sent = false;
      // With out-of-order placement the cumulative ACK jumps over packets placed earlier; acknowledge
      // at once so the requester learns that messages whose last packet came early are complete.
      if (!qp.ooo.empty() && *qp.ooo.begin() == qp.epsn) ack_now = true;
      while (!qp.ooo.empty() && *qp.ooo.begin() == qp.epsn) {
        qp.ooo.erase(qp.ooo.begin());
        ++qp.epsn;
      }
    } else if (p.psn > qp.epsn) {
      if (ooo) {
        if (qp.ooo.insert(p.psn).second) accept(p);
        return; // acknowledged when the gap closes
      } else {
        if (!qp.nak_sent) {
          qp.nak_sent = true;
          stats.naks++;
          send_ctrl(h, qp.src, p.qp, Kind::Nak, qp.epsn, vl_of(msgs[p.msg].rec.spec.sl));
        }
        return;
      }
    } else { // duplicate of something already placed: acknowledge again
      send_ctrl(h, qp.src, p.qp, Kind::Ack, qp.epsn - 1, vl_of(msgs[p.msg].rec.spec.sl));
      stats.acks++;
      return;
    }
    if (++qp.since_ack >= cfg.ack_every_packets || ack_now) {
      qp.since_ack = 0;
      if (qp.epsn > 0) {
        stats.acks++;
        send_ctrl(h, qp.src, p.qp, Kind::Ack, qp.epsn - 1, vl_of(msgs[p.msg].rec.spec.sl));
      }
    }
  }

  void on_ack(std::uint32_t q, std::uint32_t psn) {
    Qp& qp = qps[q];
    if (psn + 1 <= qp.una) return; // stale
    qp.una = psn + 1;
    qp.retries = 0;
    complete_acked(q);
    qp.rto_deadline = qp.una < qp.max_psn_sent ? sim.now() + cfg.ack_timeout : Time::max();
    if (qp.rto_deadline != Time::max()) hcas[qp.src].timer->request(qp.rto_deadline);
  }

  /// Pops messages fully acknowledged (WRITE/SEND) or fully answered (READ) off the front of the send queue,
  /// and moves the send position forward if an ACK overtook a go-back-N resend.
  void complete_acked(std::uint32_t q) {
    Qp& qp = qps[q];
    while (!qp.sendq.empty()) {
      Msg& m = msgs[qp.sendq.front()];
      const bool read = m.rec.spec.verb == Verb::Read;
      const bool complete =
          read ? m.recv_pkts == m.npkts : (m.psn_assigned && m.first_psn + m.npkts <= qp.una);
      if (!complete) break;
      if (!read) notify->push(sim.now() + cfg.nic_rx_latency, m.rec.id, 1);
      qp.sendq.pop_front();
      send_changed(qp);
      if (qp.send_pos > 0)
        --qp.send_pos;
      else
        qp.send_off = 0;
    }
    if (qp.next_psn < qp.una) reposition(q, qp.una);
  }

  /// Sets the send position to PSN `psn`: inside the message that holds it, else at the first message that
  /// has not been sent yet.
  void reposition(std::uint32_t q, std::uint32_t psn) {
    Qp& qp = qps[q];
    send_changed(qp);
    qp.next_psn = psn;
    for (std::size_t i = 0; i < qp.sendq.size(); ++i) {
      const Msg& m = msgs[qp.sendq[i]];
      if (m.rec.spec.verb == Verb::Read) continue;
      if (!m.psn_assigned || (psn >= m.first_psn && psn < m.first_psn + m.npkts)) {
        qp.send_pos = i;
        qp.send_off = m.psn_assigned ? static_cast<std::uint64_t>(psn - m.first_psn) * cfg.mtu_bytes : 0;
        return;
      }
    }
    qp.send_pos = qp.sendq.size();
    qp.send_off = 0;
  }

  void rewind(std::uint32_t q, std::uint32_t psn) {
    Qp& qp = qps[q];
    reposition(q, psn);
    activate(qp.src, q, false);
    kick(*txs[hcas[qp.src].tx]);
  }

  void on_nak(std::uint32_t q, std::uint32_t epsn) {
    Qp& qp = qps[q];
    if (epsn > 0) on_ack(q, epsn - 1);
    if (epsn < qp.next_psn) rewind(q, epsn);
  }

  void on_timeout(std::uint32_t q) {
    Qp& qp = qps[q];
    if (qp.una >= qp.max_psn_sent) {
      qp.rto_deadline = Time::max();
      return;
    }
    stats.timeouts++;
    // A timeout while packets sit in a credit cycle cannot help: report the deadlock instead of retrying.
    if (in_flight > 0) {
      const auto edges = wait_edges();
      const auto cyc = find_wait_cycle(edges);
      if (!cyc.empty()) {
        std::vector<WaitEdge> ce;
        for (std::size_t i : cyc) ce.push_back(edges[i]);
        throw DeadlockError(sim.now(), in_flight, std::move(ce), edges);
      }
    }
    if (++qp.retries > cfg.retry_count)
      throw std::runtime_error(
          "QP " + fabric.node(hcas[qp.src].node).name + " -> " + fabric.node(hcas[qp.dst].node).name +
          " exceeded " + std::to_string(cfg.retry_count) + " retries (transport retry counter exceeded)");
    qp.rto_deadline = sim.now() + cfg.ack_timeout;
    rewind(q, qp.una);
  }

  void on_read_request(HcaIndex h, const Packet& p) {
    Qp& qp = qps[p.qp];
    const Msg& m = msgs[p.msg];
    qp.reads.push_back({p.msg, m.rec.spec.bytes, 0});
    activate(h, p.qp, true);
    kick(*txs[hcas[h].tx]);
  }

  void on_read_response(const Packet& p) {
    Qp& qp = qps[p.qp];
    Msg& m = msgs[p.msg];
    m.recv_pkts++;
    m.recv_bytes += p.payload;
    stats.payload_bytes_delivered += p.payload;
    if (m.recv_pkts == m.npkts) {
      notify->push(sim.now() + cfg.nic_rx_latency, p.msg, 0);
      notify->push(sim.now() + cfg.nic_rx_latency, p.msg, 1);
      qp.reads_outstanding--;
      send_changed(qp);
      complete_acked(p.qp);
      if (qp.send_pos < qp.sendq.size()) {
        activate(qp.src, p.qp, false);
        kick(*txs[hcas[qp.src].tx]);
      }
    }
  }

  // ---------------------------------------------------------------- deadlock reporting
  std::string out_name(const Tx& tx, int vl) const {
    return fabric.node(tx.node).name + " port " + std::to_string(tx.port) + " VL" + std::to_string(vl) +
           " output";
  }
  std::string in_name(topo::NodeId n, int port, int vl) const {
    return fabric.node(n).name + " port " + std::to_string(port) + " VL" + std::to_string(vl) +
           " input buffer";
  }

  std::vector<WaitEdge> wait_edges() const {
    std::vector<WaitEdge> edges;
    for (const Tx* t : txs) {
      const Tx& tx = *t;
      if (tx.busy && !(tx.quiet_end && tx.busy_until <= sim.now())) continue; // (a quiet end: idle since)
      for (int vl = 0; vl < cfg.num_vls; ++vl) {
        bool waiting = false;
        if (tx.owner_is_switch) {
          for (int in = 0; in < tx.radix; ++in) {
            const Fifo& f = tx.voq[static_cast<std::size_t>(vl) * tx.radix + in];
            if (f.empty()) continue;
            waiting = true;
            // Packets of input `in` sit in its buffer until this output takes them.
            edges.push_back({in_name(tx.node, in + 1, vl), out_name(tx, vl), "the output"});
          }
        } else {
          waiting = tx.credit_blocked && tx.credits[static_cast<std::size_t>(vl)] <= 0;
        }
        if (waiting) edges.push_back({out_name(tx, vl), in_name(tx.peer, tx.peer_port, vl), "credits"});
      }
    }
    return edges;
  }
};

PacketNetwork::PacketNetwork(Simulation& sim, const topo::Fabric& fabric,
                             const routing::RoutingTables& tables, const PacketConfig& config,
                             EventModel events)
    : impl_(std::make_unique<Impl>(sim, fabric, tables, config, events)) {}

PacketNetwork::~PacketNetwork() = default;

MessageId PacketNetwork::post(const MessageSpec& spec) {
  return impl_->post_now(spec);
}

void PacketNetwork::post_at(Time when, const MessageSpec& spec) {
  if (when < impl_->sim.now()) throw std::logic_error("post_at in the past");
  if (when == impl_->sim.now())
    impl_->post_now(spec);
  else
    impl_->poster->add(when, spec);
}

void PacketNetwork::on_delivered(std::function<void(const MessageRecord&)> cb) {
  impl_->delivered_cb = std::move(cb);
}
void PacketNetwork::on_acked(std::function<void(const MessageRecord&)> cb) {
  impl_->acked_cb = std::move(cb);
}

void PacketNetwork::set_qp_next_send_time(HcaIndex src, HcaIndex dst, std::uint32_t slot, Time t) {
  std::uint32_t q = 0;
  auto& qp = impl_->qp_of(src, dst, slot, &q);
  qp.next_send_time = t;
  Impl::send_changed(qp);
  impl_->hcas[src].pacer->request(t);
}

double PacketNetwork::qp_rate_gbps(HcaIndex src, HcaIndex dst, std::uint32_t slot) const {
  const std::uint64_t key =
      (static_cast<std::uint64_t>(src) << 40) ^ (static_cast<std::uint64_t>(dst) << 16) ^ slot;
  const auto it = impl_->qp_index.find(key);
  if (it == impl_->qp_index.end()) return 0;
  const auto& qp = impl_->qps[it->second];
  if (impl_->cc_dcqcn) return qp.rp.rate_bps() / 1e9;
  if (impl_->cc_ibcc) return impl_->ibcc_rate_bps(qp, qp_ccti(src, dst, slot)) / 1e9;
  return impl_->line_bps(src) / 1e9;
}

int PacketNetwork::qp_ccti(HcaIndex src, HcaIndex dst, std::uint32_t slot) const {
  const std::uint64_t key =
      (static_cast<std::uint64_t>(src) << 40) ^ (static_cast<std::uint64_t>(dst) << 16) ^ slot;
  const auto it = impl_->qp_index.find(key);
  if (it == impl_->qp_index.end() || !impl_->cc_ibcc) return 0;
  auto& qp = impl_->qps[it->second];
  IbCcRp st = impl_->ib_state(qp, 0); // per QP, or SL 0's state with per_sl
  st.advance(impl_->sim.now());
  return st.ccti();
}

const std::vector<QpRateTrace>& PacketNetwork::rate_traces() const {
  return impl_->rate_traces;
}
const std::vector<PortQueueTrace>& PacketNetwork::queue_traces() const {
  return impl_->queue_traces;
}

const MessageRecord& PacketNetwork::message(MessageId id) const {
  return impl_->msgs.at(id).rec;
}
std::size_t PacketNetwork::num_messages() const {
  return impl_->msgs.size();
}
std::size_t PacketNetwork::num_hcas() const {
  return impl_->hcas.size();
}
const NetworkStats& PacketNetwork::stats() const {
  return impl_->stats;
}
std::uint64_t PacketNetwork::packets_in_flight() const {
  return impl_->in_flight;
}
std::uint64_t PacketNetwork::peak_packets_in_flight() const {
  return impl_->peak_in_flight;
}
std::size_t PacketNetwork::packet_state_bytes() {
  return sizeof(Packet) + sizeof(std::uint32_t) + sizeof(LineItem);
}
const PacketConfig& PacketNetwork::config() const {
  return impl_->cfg;
}

std::vector<PortStats> PacketNetwork::port_stats() const {
  std::vector<PortStats> out;
  out.reserve(impl_->txs.size());
  for (const auto* t : impl_->txs) {
    out.push_back(t->stats);
    out.back().packets = t->sent_packets;
    out.back().bytes = t->sent_bytes;
    out.back().busy = t->busy_time;
    out.back().peak_queue_bytes = t->peak_queue;
  }
  return out;
}

} // namespace ibn::pkt
