// HCAs: posting messages, what an HCA port sends next (ACK/NAK/CNP first, then round-robin over its active
// QPs' requests and READ responses), what it does with an arriving packet, and the timers. The QP's own
// state machine (PSNs, ACKs, go-back-N) is RcQp in transport.hpp; this file carries out its answers.
#include "models/packet/core.hpp"

#include "sim/error.hpp"

#include <stdexcept>

namespace ibn::pkt::detail {

namespace {
std::uint64_t qp_key(HcaIndex src, HcaIndex dst, std::uint32_t slot) {
  return (static_cast<std::uint64_t>(src) << 40) ^ (static_cast<std::uint64_t>(dst) << 16) ^ slot;
}
} // namespace

Qp& Core::qp_of(HcaIndex src, HcaIndex dst, std::uint32_t slot, std::uint32_t* index) {
  const std::uint64_t key = qp_key(src, dst, slot);
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

Qp* Core::find_qp(HcaIndex src, HcaIndex dst, std::uint32_t slot) {
  const auto it = qp_index.find(qp_key(src, dst, slot));
  return it == qp_index.end() ? nullptr : &qps[it->second];
}

void Core::activate(HcaIndex h, std::uint32_t q, bool responder) {
  Qp& qp = qps[q];
  bool& flag = responder ? qp.resp_active : qp.req_active;
  if (!flag) {
    flag = true;
    ++qp_set_changes;
    hcas[h].active.push_back(q << 1 | (responder ? 1u : 0u));
  }
}

MessageId Core::post_now(const MessageSpec& s) {
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
  auto id = static_cast<MessageId>(msgs.size());
  if (!free_msgs.empty()) { // a completed WRITE/SEND's record (recycle_msgs)
    id = free_msgs.back();
    free_msgs.pop_back();
  }
  Msg m;
  m.rec.id = id;
  m.rec.spec = s;
  m.rec.posted = sim.now();
  m.qp = q;
  m.npkts = npkts_of(s.bytes);
  if (qp.failed) { // a QP in the error state completes new work requests in error (flushed)
    m.rec.is_failed = true;
    m.rec.failed = sim.now();
    store_msg(m);
    return id;
  }
  store_msg(m);
  qp.sendq.push_back(id);
  qp.send_changed();
  activate(s.src, q, false);
  pacer_of(s.src).request(sim.now() + cfg.tx_latency());
  return id;
}

void Core::hca_wake(HcaIndex h) {
  Hca& hca = hcas[h];
  const Time now = sim.now();
  Time next_rto = Time::max();
  for (std::uint32_t q : hca.req_qps) {
    Qp& qp = qps[q];
    if (qp.rto_deadline <= now) on_timeout(q);
    next_rto = std::min(next_rto, qp.rto_deadline);
  }
  kick(tx_at(hca.tx));
  if (next_rto != Time::max()) timer_of(h).request(next_rto);
}

/// Which packet the HCA sends next: ACK/NAK first, then round-robin over active QPs.
std::uint32_t Core::select_hca(Tx& tx) {
  Hca& hca = hcas[tx.owner];
  if (!hca.ctrl.empty()) {
    if (!fits(tx, pool[hca.ctrl.head].wire, pool[hca.ctrl.head].vl)) return kNil;
    return pool.pop(hca.ctrl);
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
      else if (qp.reads.front().ready > now) // the request is still being processed
        wake = std::min(wake, qp.reads.front().ready);
      else
        pi = make_read_response(q, tx);
    } else {
      pi = make_request(q, tx, now, wake, done);
    }
    if (done) {
      (responder ? qp.resp_active : qp.req_active) = false;
      ++qp_set_changes;
      hca.active.erase(hca.active.begin() + static_cast<std::ptrdiff_t>(hca.rr));
      --n;
      continue;
    }
    ++hca.rr;
    ++k;
    if (pi != kNil) return pi;
  }
  if (wake != Time::max()) pacer_of(tx.owner).request(wake);
  return kNil;
}

std::uint32_t Core::make_read_response(std::uint32_t q, Tx& tx) {
  Qp& qp = qps[q];
  ReadWork& w = qp.reads.front();
  const auto payload = static_cast<std::uint32_t>(std::min<std::uint64_t>(w.remaining, cfg.mtu_bytes));
  const std::uint32_t wire = cfg.packet_wire_bytes(w.remaining, 0, false, false); // payload + header, no RETH
  const std::uint8_t vl = vl_of(msgs[w.msg].rec.spec.sl);
  if (!fits(tx, wire, vl)) return kNil;
  const std::uint32_t pi = pool.alloc();
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

/// The requester's next packet on QP q, or kNil. Sets `done` when the QP has nothing left to send, and lowers
/// `wake` to when it will have something.
[[gnu::always_inline]] inline std::uint32_t Core::make_request(std::uint32_t q, Tx& tx, Time now, Time& wake,
                                                               bool& done) {
  Qp& qp = qps[q];
  // Its next packet did not fit the credits and nothing about it has changed since (the answer below would be
  // the same: `ready` was already reached, a READ request was not held back by max_rd_atomic).
  if (qp.blocked_need != 0 && tx.credits[qp.blocked_vl] < static_cast<std::int64_t>(qp.blocked_need)) {
    tx.credit_blocked = true;
    return kNil;
  }
  qp.blocked_need = 0;
  std::uint32_t mi = qp.cur_msg;
  if (mi == kNil) {
    mi = qp.find_send_message(msgs);
    if (mi == kNil) {
      done = true;
      return kNil;
    }
    qp.cur_msg = mi;
  }
  Msg& m = msgs[mi];
  Time ready = std::max(m.rec.posted + cfg.tx_latency(), qp.next_send_time);
  if (ready > now && cc_dcqcn && qp.next_send_time > now) dcqcn_paced(qp, m, now, ready, wake);
  if (ready > now) {
    wake = std::min(wake, ready);
    return kNil;
  }
  const MessageSpec& s = m.rec.spec;
  if (s.verb == Verb::Read) {
    if (qp.reads_outstanding >= cfg.max_rd_atomic) return kNil; // resumes when a response completes
    // A READ request: header + RETH, no payload.
    const std::uint32_t wire = cfg.packet_wire_bytes(0, 0, true, false);
    if (!fits(tx, wire, vl_of(s.sl))) return qp.blocked(wire, vl_of(s.sl));
    const std::uint32_t pi = pool.alloc();
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
    qp.sent_read_request();
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
  if (!fits(tx, wire, vl_of(s.sl))) return qp.blocked(wire, vl_of(s.sl));
  const std::uint32_t pi = pool.alloc();
  Packet& p = pool[pi];
  p.vl = vl_of(s.sl);
  p.kind = Kind::Data;
  p.sl = s.sl;
  p.qp = q;
  p.msg = mi;
  p.psn = qp.next_psn;
  p.payload = payload;
  p.wire = wire;
  p.src = qp.src;
  p.dst = qp.dst;
  p.last = last;
  if (first && qp.next_psn == m.first_psn && qp.next_psn >= qp.max_psn_sent) m.rec.first_tx = now; // not a resend
  if (qp.sent_data(payload, last)) {
    m.rec.retransmitted_packets++;
    stats.retransmitted_packets++;
  } else {
    stats.payload_bytes_sent += payload;
  }
  if (qp.rto_deadline == Time::max()) {
    set_rto(qp, now + cfg.ack_timeout);
    timer_of(qp.src).request(qp.rto_deadline);
  }
  if (cc_dcqcn || cc_ibcc) pace(qp, wire, s.sl, now);
  stats.packets_injected++;
  return pi;
}

void Core::send_ctrl(HcaIndex from, HcaIndex to, std::uint32_t q, Kind kind, std::uint32_t psn,
                     std::uint8_t vl, std::uint32_t wire) {
  const std::uint32_t pi = pool.alloc();
  Packet& p = pool[pi];
  p.vl = vl;
  p.kind = kind;
  p.qp = q;
  p.psn = psn;
  p.wire = wire != 0 ? wire : cfg.header_bytes + cfg.ack_payload_bytes;
  p.src = from;
  p.dst = to;
  pool.push(hcas[from].ctrl, pi);
  kick(tx_at(hcas[from].tx));
}

/// Places a packet's payload; returns true when it completed its message.
[[gnu::always_inline]] inline bool Core::accept(const Packet& p) {
  Msg& m = msgs[p.msg];
  m.recv_pkts++;
  m.recv_bytes += p.payload;
  stats.payload_bytes_delivered += p.payload;
  if (m.recv_pkts != m.npkts) return false;
  notify->push(sim.now() + cfg.nic_rx_latency, p.msg, 0);
  return true;
}

[[gnu::always_inline]] inline void Core::on_data(HcaIndex h, const Packet& p) {
  if (p.flags != 0) notify_congestion(h, p);
  Qp& qp = qps[p.qp];
  switch (qp.receive(p.psn, cfg.ar_mode != ArMode::Off)) {
  case Rx::InOrder: {
    const bool completed = accept(p);
    if (qp.advance(p.last || completed, cfg.ack_every_packets)) {
      stats.acks++;
      send_ctrl(h, qp.src, p.qp, Kind::Ack, qp.epsn - 1, vl_of(p.sl));
    }
    if (fluid_on) [[unlikely]] { // fluid skips sample when each QP last advanced, once per window
      qp.last_rx = sim.now();
      if (sim.now() >= fluid.next_probe) fluid_probe();
    }
    return;
  }
  case Rx::Placed:
    accept(p);
    return;
  case Rx::Dropped:
    return;
  case Rx::SendNak:
    stats.naks++;
    send_ctrl(h, qp.src, p.qp, Kind::Nak, qp.epsn, vl_of(p.sl));
    return;
  case Rx::Duplicate: // a duplicate of something placed (its message may be complete): acknowledge again
    send_ctrl(h, qp.src, p.qp, Kind::Ack, qp.epsn - 1, vl_of(p.sl));
    stats.acks++;
    return;
  }
}

void Core::arrive_hca(HcaIndex h, Tx& from, std::uint32_t pi) {
  Packet& p = pool[pi];
  // The HCA drains its receive buffer at line rate: credits go back as soon as the packet has arrived.
  push_credits(from, p.vl, p.wire);
  if (p.corrupted) { // ICRC/VCRC fails, or its cable died: dropped; go-back-N or the timeout recovers
    count_lost(from, p);
    pool.release(pi);
    return;
  }
  stats.packets_delivered++;
  const Packet pk = p;
  pool.release(pi);
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

void Core::on_ack(std::uint32_t q, std::uint32_t psn) {
  Qp& qp = qps[q];
  if (qp.failed || !qp.ack(psn)) return; // stale, or the QP is in the error state
  complete_acked(q);
  set_rto(qp, qp.unacked() ? sim.now() + cfg.ack_timeout : Time::max());
  if (qp.rto_deadline != Time::max()) timer_of(qp.src).request(qp.rto_deadline);
}

void Core::complete_acked(std::uint32_t q) {
  const Time done = sim.now() + cfg.nic_rx_latency;
  qps[q].complete_acked(msgs, cfg.mtu_bytes, [&](MessageId id) { notify->push(done, id, 1); });
}

void Core::rewind(std::uint32_t q, std::uint32_t psn) {
  Qp& qp = qps[q];
  if (qp.failed) return;
  qp.reposition(msgs, cfg.mtu_bytes, psn);
  activate(qp.src, q, false);
  kick(tx_at(hcas[qp.src].tx));
}

void Core::on_nak(std::uint32_t q, std::uint32_t epsn) {
  Qp& qp = qps[q];
  if (epsn > 0) on_ack(q, epsn - 1);
  if (epsn < qp.next_psn) rewind(q, epsn);
}

void Core::on_timeout(std::uint32_t q) {
  Qp& qp = qps[q];
  if (qp.failed) return;
  if (!qp.unacked()) {
    set_rto(qp, Time::max());
    return;
  }
  stats.timeouts++;
  // A timeout while packets sit in a credit cycle cannot help: report the deadlock instead of retrying.
  if (pool.in_flight() > 0) {
    const auto edges = wait_edges();
    const auto cyc = find_wait_cycle(edges);
    if (!cyc.empty()) {
      std::vector<WaitEdge> ce;
      for (std::size_t i : cyc) ce.push_back(edges[i]);
      throw DeadlockError(sim.now(), pool.in_flight(), std::move(ce), edges);
    }
  }
  if (++qp.retries > cfg.retry_count) { // transport retry counter exceeded: the QP goes to the error state
    qp_error(q);
    return;
  }
  set_rto(qp, sim.now() + cfg.ack_timeout);
  rewind(q, qp.una);
}

/// The responder processes the request as an HCA processes any message: its receive path (nic_rx) takes the
/// request in, its transmit path (nic_tx) starts the response; the first response packet may leave
/// read_responder_latency() after the request arrived. Alone on an idle path a READ of S bytes thus takes
///   requester nic_tx + request one-way (cables, switches, request wire) + nic_rx + nic_tx (responder)
///   + response one-way (cables, switches, S + headers) + requester nic_rx.
void Core::on_read_request(HcaIndex h, const Packet& p) {
  Qp& qp = qps[p.qp];
  const Msg& m = msgs[p.msg];
  const Time ready = sim.now() + cfg.read_responder_latency();
  qp.reads.push_back({p.msg, m.rec.spec.bytes, 0, ready});
  activate(h, p.qp, true);
  if (ready > sim.now())
    pacer_of(h).request(ready);
  else
    kick(tx_at(hcas[h].tx));
}

void Core::on_read_response(const Packet& p) {
  Qp& qp = qps[p.qp];
  Msg& m = msgs[p.msg];
  m.recv_pkts++;
  m.recv_bytes += p.payload;
  stats.payload_bytes_delivered += p.payload;
  if (m.recv_pkts == m.npkts) {
    notify->push(sim.now() + cfg.nic_rx_latency, p.msg, 0);
    notify->push(sim.now() + cfg.nic_rx_latency, p.msg, 1);
    qp.reads_outstanding--;
    qp.send_changed();
    complete_acked(p.qp);
    if (qp.send_pos < qp.sendq.size()) {
      activate(qp.src, p.qp, false);
      kick(tx_at(hcas[qp.src].tx));
    }
  }
}

void Core::notify_deliver(const LineItem& it) {
  Msg& m = msgs[it.a];
  if (it.b == 0) {
    m.rec.delivered = sim.now();
    m.rec.is_delivered = true;
    if (delivered_cb) delivered_cb(m.rec); // (may post: `m` is not used after it)
  } else {
    m.rec.acked = sim.now();
    m.rec.is_acked = true;
    if (acked_cb) acked_cb(m.rec);
  }
  // Recycling: a WRITE/SEND both delivered and acknowledged is referred to by nothing but duplicates still in
  // flight, which read only their own packet (Packet::sl). READs are kept (late responses count into them).
  const MessageRecord& r = msgs[it.a].rec;
  if (recycle_msgs && r.is_delivered && r.is_acked && r.spec.verb != Verb::Read) free_msgs.push_back(it.a);
}

} // namespace ibn::pkt::detail
