#pragma once
// RC transport: messages and the QP state machine (IBA ch. 9: PSNs, cumulative ACKs, ACK coalescing,
// go-back-N after a NAK or a timeout, RDMA READ). No engine internals: no ports, packets, events or clock of
// its own. The HCA (hca.cpp) asks it what to send, tells it what arrived and does what it answers (send an
// ACK or NAK, notify a completion, arm a timer). tests/models/components_test.cpp drives it alone.
#include "models/packet/cc.hpp"
#include "models/packet/network.hpp"
#include "models/packet/packet.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <set>
#include <vector>

namespace ibn::pkt {

/// A message and its progress at both ends.
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

/// An RDMA READ the responder is answering.
struct ReadWork {
  std::uint32_t msg = 0;
  std::uint64_t remaining = 0;
  std::uint32_t sent_pkts = 0;
  Time ready; ///< when the responder may send the first response packet (DeviceKnobs::read_responder_latency)
};

/// What the responder makes of an arriving data packet's PSN (RcQp::receive).
enum class Rx : std::uint8_t {
  InOrder,   ///< the expected PSN: place it, then RcQp::advance
  Placed,    ///< ahead of the expected PSN, placed out of order (AR on): acknowledged when the gap closes
  Dropped,   ///< ahead of the expected PSN, or a repeat of a placed one: not placed, nothing to send
  SendNak,   ///< ahead of the expected PSN without out-of-order placement: send a NAK for epsn (once)
  Duplicate, ///< behind the expected PSN: acknowledge again (epsn - 1)
};

struct RcQp {
  HcaIndex src = 0, dst = 0;
  std::uint32_t slot = 0;
  // ---- requester (at src)
  std::deque<std::uint32_t> sendq; ///< messages not yet complete at the requester, in post order
  std::size_t send_pos = 0;        ///< index in sendq of the message being segmented
  std::uint64_t send_off = 0;      ///< bytes of it already sent
  std::uint32_t next_psn = 0;
  std::uint32_t max_psn_sent = 0; ///< one past the highest PSN ever sent
  std::uint32_t una = 0;
  Time next_send_time;
  Time rto_deadline = Time::max();
  int retries = 0;
  bool failed = false; ///< error state: retries exhausted (Core::qp_error); nothing more is sent or retried
  std::uint32_t reads_outstanding = 0;
  /// The HCA's memo of its next request, valid until the send state changes (send_changed): the message at
  /// send_pos after skipping READs already requested (kNil: walk sendq again), and the credits on
  /// `blocked_vl` that its next packet lacked (0: none), so that asking again while they are still short is
  /// two loads.
  std::uint32_t cur_msg = kNil;
  std::uint32_t blocked_need = 0;
  std::uint8_t blocked_vl = 0;
  bool req_active = false;
  // ---- responder (at dst)
  std::uint32_t epsn = 0;
  Time last_rx; ///< when epsn last advanced (kept only while fluid skips are on, which sample it)
  std::set<std::uint32_t> ooo;
  bool nak_sent = false;
  std::uint32_t since_ack = 0;
  std::deque<ReadWork> reads;
  bool resp_active = false;
  Time last_cnp = Time::max(); ///< responder: when it last sent a CNP for this QP (max: never)
  // ---- congestion control at the requester
  DcqcnRp rp;
  IbCcRp ib;
  std::uint32_t trace = kNil; ///< index in the rate traces

  // ---------------------------------------------------------------- requester
  /// Forgets the memo (the send queue, send position, next send time or READs in flight changed).
  void send_changed() {
    cur_msg = kNil;
    blocked_need = 0;
  }
  /// The memo's answer when the next packet (`wire` bytes on `vl`) does not fit the credits; returns kNil.
  std::uint32_t blocked(std::uint32_t wire, std::uint8_t vl) {
    blocked_need = PacketConfig::credits_for(wire);
    blocked_vl = vl;
    return kNil;
  }
  /// The message at the send position, skipping READs whose request is already out (after a go-back-N
  /// rewind); kNil when there is nothing left to send. Moves send_pos past the skipped READs.
  std::uint32_t find_send_message(const std::vector<Msg>& msgs) {
    for (const std::size_t n = sendq.size(); send_pos < n; ++send_pos, send_off = 0) {
      const std::uint32_t cand = sendq[send_pos];
      const Msg& c = msgs[cand];
      if (c.rec.spec.verb != Verb::Read || !c.req_sent) return cand;
    }
    return kNil;
  }
  /// A WRITE/SEND packet of `payload` bytes (the last of its message when `last`) is sent: advances the PSN
  /// and the send position. Returns true when it is a retransmission (its PSN was sent before).
  bool sent_data(std::uint32_t payload, bool last) {
    const bool resend = next_psn < max_psn_sent;
    ++next_psn;
    max_psn_sent = std::max(max_psn_sent, next_psn);
    send_off += payload;
    if (last) {
      ++send_pos;
      send_off = 0;
      cur_msg = kNil;
    }
    return resend;
  }
  /// A READ request is sent: the send position moves to the next message.
  void sent_read_request() {
    reads_outstanding++;
    ++send_pos;
    send_off = 0;
    cur_msg = kNil;
  }
  /// A cumulative ACK for `psn` arrives: false when it is stale (nothing new acknowledged).
  bool ack(std::uint32_t psn) {
    if (psn + 1 <= una) return false;
    una = psn + 1;
    retries = 0;
    return true;
  }
  /// Whether packets are sent and not acknowledged (the ACK timeout runs).
  bool unacked() const { return una < max_psn_sent; }
  /// Pops messages fully acknowledged (WRITE/SEND) or fully answered (READ) off the front of the send queue,
  /// calling `acked(msg)` for each WRITE/SEND, and moves the send position forward if an ACK overtook a
  /// go-back-N resend.
  template <class Acked> void complete_acked(const std::vector<Msg>& msgs, std::uint32_t mtu, Acked&& acked) {
    while (!sendq.empty()) {
      const Msg& m = msgs[sendq.front()];
      const bool read = m.rec.spec.verb == Verb::Read;
      const bool complete = read ? m.recv_pkts == m.npkts : (m.psn_assigned && m.first_psn + m.npkts <= una);
      if (!complete) break;
      if (!read) acked(m.rec.id);
      sendq.pop_front();
      send_changed();
      if (send_pos > 0)
        --send_pos;
      else
        send_off = 0;
    }
    if (next_psn < una) reposition(msgs, mtu, una);
  }
  /// Sets the send position to PSN `psn`: inside the message that holds it, else at the first message that
  /// has not been sent yet.
  void reposition(const std::vector<Msg>& msgs, std::uint32_t mtu, std::uint32_t psn) {
    send_changed();
    next_psn = psn;
    for (std::size_t i = 0; i < sendq.size(); ++i) {
      const Msg& m = msgs[sendq[i]];
      if (m.rec.spec.verb == Verb::Read) continue;
      if (!m.psn_assigned || (psn >= m.first_psn && psn < m.first_psn + m.npkts)) {
        send_pos = i;
        send_off = m.psn_assigned ? static_cast<std::uint64_t>(psn - m.first_psn) * mtu : 0;
        return;
      }
    }
    send_pos = sendq.size();
    send_off = 0;
  }

  // ---------------------------------------------------------------- responder
  /// A data packet with PSN `psn` arrives (`ooo_placement`: adaptive routing, packets may overtake).
  Rx receive(std::uint32_t psn, bool ooo_placement) {
    if (psn == epsn) return Rx::InOrder;
    if (psn > epsn) {
      if (ooo_placement) return ooo.insert(psn).second ? Rx::Placed : Rx::Dropped;
      if (nak_sent) return Rx::Dropped;
      nak_sent = true;
      return Rx::SendNak;
    }
    return Rx::Duplicate;
  }
  /// After an in-order packet was placed: moves the expected PSN past it and past packets placed earlier out
  /// of order. `ack_now`: the packet asks for an ACK at once (its message's last, or it completed one).
  /// Returns true when an ACK for epsn - 1 is due (every `ack_every` packets, at once when asked, and when
  /// the expected PSN jumped over packets placed out of order).
  bool advance(bool ack_now, std::uint32_t ack_every) {
    ++epsn;
    nak_sent = false;
    // With out-of-order placement the cumulative ACK jumps over packets placed earlier; acknowledge at once
    // so the requester learns that messages whose last packet came early are complete.
    if (!ooo.empty() && *ooo.begin() == epsn) ack_now = true;
    while (!ooo.empty() && *ooo.begin() == epsn) {
      ooo.erase(ooo.begin());
      ++epsn;
    }
    if (++since_ack >= ack_every || ack_now) {
      since_ack = 0;
      return epsn > 0;
    }
    return false;
  }
};

} // namespace ibn::pkt
