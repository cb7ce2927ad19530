#pragma once
// A switch output's queues and its arbiter: virtual output queues per (VL, input), a bitmask of the non-empty
// ones, round-robin across inputs per VL, and VL arbitration (IBA §7.6.9: a high- and a low-priority
// weighted round-robin table, with a limit on high-priority bytes while low-priority packets wait).
//
// The functions work on any port type with the fields listed below (the engine's Tx, or a plain struct in
// tests/models/components_test.cpp), so the arbiter is a swappable part that is testable alone:
//   Fifo* voq                 [vl * radix + input]
//   std::uint64_t* nonempty   [vl * words + input / 64], bit input % 64
//   int radix; std::uint16_t words
//   credits[vl]               credits the peer's input buffer has for VL vl (a packet fits when >= its need)
//   rr_input[vl]              the input served last on VL vl (0-based)
//   ArbPosition high, low; std::uint64_t high_bytes
//   std::uint64_t queued_bytes, queued_packets
#include "models/packet/config.hpp"
#include "models/packet/packet.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibn::pkt {

/// Position in a VL arbitration table and the weight (64-byte units) left there.
struct ArbPosition {
  std::size_t pos = 0;
  int left = 0;
};

/// Appends packet `pi` to the VOQ (vl, input) of `port` and counts it as queued.
template <class Port>
[[gnu::always_inline]] inline void voq_push(Port& port, PacketPool& pool, std::uint32_t pi, int vl,
                                            unsigned input) {
  const std::size_t q = static_cast<std::size_t>(vl) * port.radix + input;
  pool.push(port.voq[q], pi);
  port.nonempty[static_cast<std::size_t>(vl) * port.words + input / 64] |= 1ull << (input % 64);
  port.queued_bytes += pool[pi].wire;
  port.queued_packets++;
}

/// The VL arbitration tables of the switches (one per network: every output uses the same tables).
class VlArbiter {
 public:
  VlArbiter() = default;
  /// From the configuration: an empty low table is every data VL with weight 4 (one MTU packet per turn).
  explicit VlArbiter(const PacketConfig& cfg) : high_(cfg.vl_arb_high), low_(cfg.vl_arb_low) {
    high_limit_ = cfg.vl_high_limit;
    if (low_.empty())
      for (int v = 0; v < cfg.num_vls; ++v) low_.push_back({v, 4});
    if (high_.empty() && low_.size() == 1 && low_[0].weight > 0) single_vl_ = low_[0].vl;
  }
  /// The VL when the tables are one low entry of positive weight (the default: nothing to arbitrate between
  /// VLs), else -1.
  int single_vl() const { return single_vl_; }
  /// A new port's arbitration positions.
  void init(ArbPosition& high, ArbPosition& low) const {
    if (!high_.empty()) high.left = high_[0].weight;
    low.left = low_[0].weight;
  }

  /// The input whose head packet on `vl` this output serves next (round-robin from the last one served,
  /// among heads that fit the credits), or -1. Walks the set bits of the non-empty mask only.
  template <class Port>
  [[gnu::always_inline]] static int candidate_input(const Port& tx, const PacketPool& pool, int vl) {
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
  template <class Port>
  static int wrr_pick(const std::vector<VlArbEntry>& table, ArbPosition& st, const Port& tx,
                      const PacketPool& pool, int& input) {
    const std::size_t n = table.size();
    for (std::size_t k = 0; k < n; ++k) {
      const VlArbEntry& e = table[st.pos];
      if (e.weight > 0 && st.left > 0) {
        input = candidate_input(tx, pool, e.vl);
        if (input >= 0) return e.vl;
      }
      st.pos = st.pos + 1 == n ? 0 : st.pos + 1;
      st.left = table[st.pos].weight;
    }
    return -1;
  }

  /// Takes the packet `tx` sends next off its queues (kNil when nothing queued fits the credits) and moves
  /// the round-robin and arbitration state past it.
  template <class Port> [[gnu::always_inline]] std::uint32_t select(Port& tx, PacketPool& pool) const {
    if (tx.queued_packets == 0) return kNil;
    int input = -1, vl = -1;
    bool high = false;
    if (single_vl_ >= 0) { // one data VL, one low-table entry: nothing to arbitrate between VLs
      input = candidate_input(tx, pool, single_vl_);
      if (input < 0) return kNil;
      vl = single_vl_;
    } else if (!high_.empty()) {
      const bool over_limit =
          high_limit_ != 255 && tx.high_bytes >= static_cast<std::uint64_t>(high_limit_) * 4096u;
      ArbPosition probe = tx.low;
      int low_input = -1;
      const bool low_waiting = over_limit && wrr_pick(low_, probe, tx, pool, low_input) >= 0;
      if (!low_waiting) {
        vl = wrr_pick(high_, tx.high, tx, pool, input);
        high = vl >= 0;
      }
    }
    if (vl < 0) vl = wrr_pick(low_, tx.low, tx, pool, input);
    if (vl < 0) return kNil;
    Fifo& f = tx.voq[static_cast<std::size_t>(vl) * tx.radix + input];
    const std::uint32_t pi = pool.pop(f);
    if (f.empty())
      tx.nonempty[static_cast<std::size_t>(vl) * tx.words + static_cast<unsigned>(input) / 64] &=
          ~(1ull << (static_cast<unsigned>(input) % 64));
    tx.rr_input[static_cast<std::size_t>(vl)] = static_cast<std::uint16_t>(input);
    const std::uint32_t wire = pool[pi].wire;
    tx.queued_bytes -= wire;
    tx.queued_packets--;
    if (single_vl_ >= 0) return pi; // no VL arbitration state to keep (one table entry, never switched)
    ArbPosition& st = high ? tx.high : tx.low;
    const auto& table = high ? high_ : low_;
    st.left -= static_cast<int>(PacketConfig::credits_for(wire));
    if (st.left <= 0) { // weight spent: the next entry gets the grant
      st.pos = st.pos + 1 == table.size() ? 0 : st.pos + 1;
      st.left = table[st.pos].weight;
    }
    tx.high_bytes = high ? tx.high_bytes + wire : 0;
    return pi;
  }

 private:
  std::vector<VlArbEntry> high_, low_; // effective tables
  int high_limit_ = 255;
  int single_vl_ = -1;
};

} // namespace ibn::pkt
