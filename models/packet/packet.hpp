#pragma once
// The packet engine's packets: the pooled Packet record, the intrusive FIFO that queues them (switch VOQs, an
// HCA's ACK/NAK queue) and the pool that owns them. Pure: no Simulation; tests/models/components_test.cpp.
#include "models/routing/routing.hpp"
#include "sim/time.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibn::pkt {

using HcaIndex = routing::HcaIndex;

inline constexpr std::uint32_t kNil = ~std::uint32_t{0};
inline constexpr std::size_t kMaxVls = 15; // data VLs (PacketConfig::validate)

enum class Kind : std::uint8_t { Data, Ack, Nak, ReadReq, ReadResp, Cnp };

// Packet::flags: congestion marks set by switches.
inline constexpr std::uint8_t kFlagCe = 1;   // ECN congestion experienced (DCQCN's CP)
inline constexpr std::uint8_t kFlagFecn = 2; // IB forward explicit congestion notification
// With `corrupted`: the packet was on a cable when it went down (faults.cpp); dropped and counted as lost.
inline constexpr std::uint8_t kFlagLost = 4;

/// A packet in flight. Pooled and addressed by index; `next` links it into one FIFO at a time.
struct alignas(64) Packet {
  std::uint32_t next = kNil;
  std::uint32_t qp = 0;
  std::uint32_t psn = 0; ///< PSN; a CNP/BECN carries its SL here
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
  std::uint8_t sl = 0;    ///< data packets: its message's SL (the responder's ACK/NAK/CNP go on its VL)
  Time tail;              ///< when its last byte reached (or will reach) the current node's input
};

/// Pool index 0 is a sentinel, never allocated: the tail of every empty FIFO (so that pushing needs no branch
/// on whether the FIFO was empty).
inline constexpr std::uint32_t kSentinelPacket = 0;

struct Fifo {
  std::uint32_t head = kNil;
  std::uint32_t tail = kSentinelPacket;
  bool empty() const { return head == kNil; }
};

/// Owns every packet: allocation with a free list, the count in flight (the deadlock detector's progress
/// probe) and its peak, and the FIFO links.
class PacketPool {
 public:
  PacketPool() { pool_.emplace_back(); } // the sentinel (kSentinelPacket)
  Packet& operator[](std::uint32_t i) { return pool_[i]; }
  const Packet& operator[](std::uint32_t i) const { return pool_[i]; }

  /// A fresh (default) packet.
  std::uint32_t alloc() {
    std::uint32_t i;
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
      pool_[i] = Packet{};
    } else {
      i = static_cast<std::uint32_t>(pool_.size());
      pool_.emplace_back();
    }
    if (++in_flight_ > peak_) peak_ = in_flight_;
    return i;
  }
  void release(std::uint32_t i) {
    free_.push_back(i);
    --in_flight_;
  }
  std::uint64_t in_flight() const { return in_flight_; }
  /// The indices of every allocated packet (a walk of the whole pool: for rare checks).
  std::vector<std::uint32_t> allocated() const {
    std::vector<bool> is_free(pool_.size(), false);
    for (const auto i : free_) is_free[i] = true;
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 1; i < pool_.size(); ++i)
      if (!is_free[i]) out.push_back(i);
    return out;
  }
  std::uint64_t peak_in_flight() const { return peak_; }

  // FIFO links without data-dependent branches (masks, not ?:, which compilers turn into branches).
  void push(Fifo& f, std::uint32_t p) {
    pool_[p].next = kNil;
    pool_[f.tail].next = p; // the sentinel's link when empty: never read
    const std::uint32_t was_empty = 0u - static_cast<std::uint32_t>(f.tail == kSentinelPacket);
    f.head = (p & was_empty) | (f.head & ~was_empty);
    f.tail = p;
  }
  std::uint32_t pop(Fifo& f) {
    const std::uint32_t p = f.head;
    f.head = pool_[p].next;
    f.tail &= 0u - static_cast<std::uint32_t>(f.head != kNil); // the sentinel (0) when it emptied
    pool_[p].next = kNil;
    return p;
  }

 private:
  std::vector<Packet> pool_;
  std::vector<std::uint32_t> free_;
  std::uint64_t in_flight_ = 0;
  std::uint64_t peak_ = 0;
};

} // namespace ibn::pkt
