// Congestion control at the HCAs: the reaction point (a requester QP's rate or inter-packet delay, DCQCN's
// DcqcnRp or IB CC's IbCcRp from cc.hpp, applied as the QP's next send time) and the notification point (a
// responder answering marked packets with CNPs or BECNs). The congestion point that marks packets is
// Core::mark (switch.cpp).
#include "models/packet/core.hpp"

#include <algorithm>

namespace ibn::pkt::detail {

/// The rate the requester's CC starts from: its link rate, or the injection cap when lower.
double Core::line_bps(HcaIndex h) const {
  const std::uint32_t i = hcas[h].tx;
  if (i == kNil) return 0;
  if (const Tx* t = txs[i]) return static_cast<double>(t->cap_bps != 0 ? t->cap_bps : t->rate_bps);
  const topo::Link& link = fabric.link(link_of_tx(i)); // not made yet: what materialise will set
  return static_cast<double>(std::min(hca_cap_bps(link), link.rate_bps()));
}

void Core::init_cc(Qp& qp) {
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

/// Time for a full-MTU packet at the requester's rate (IB CC's T_maxpkt), in ps.
std::int64_t Core::t_maxpkt_ps(HcaIndex h) const {
  return serialization_time(cfg.mtu_bytes + cfg.header_bytes, static_cast<std::uint64_t>(line_bps(h)))
      .count_ps();
}

std::int64_t Core::ipd_ps(HcaIndex h, int ccti) const {
  const CctEntry& e = cct[static_cast<std::size_t>(ccti)];
  return (t_maxpkt_ps(h) >> e.shift) * e.multiplier;
}

void Core::trace_rate(const Qp& qp, double bps) {
  if (qp.trace == kNil) return;
  auto& pts = rate_traces[qp.trace].rate_gbps;
  if (!pts.empty() && pts.back().value == bps / 1e9) return;
  pts.push_back({sim.now(), bps / 1e9});
}

double Core::ibcc_rate_bps(const Qp& qp, int ccti) const {
  const double line = line_bps(qp.src);
  if (ccti == 0) return line;
  const double t = static_cast<double>(t_maxpkt_ps(qp.src));
  return line * t / (t + static_cast<double>(ipd_ps(qp.src, ccti)));
}

/// DCQCN: after a rate change, a QP that waits for its pacing gap waits the rest at the new rate.
void Core::dcqcn_rate_changed(Qp& qp, double old_bps) {
  const double r = qp.rp.rate_bps();
  if (r == old_bps) return;
  const Time now = sim.now();
  qp.send_changed();
  if (qp.next_send_time > now)
    qp.next_send_time = now + Time::ps(static_cast<std::int64_t>(
                                  static_cast<double>((qp.next_send_time - now).count_ps()) * old_bps / r));
  trace_rate(qp, r);
}

/// DCQCN, a paced QP whose next packet (of message `m`) is not ready at `now`: applies the timer increases
/// due by now (lazy timers), then the rest of the gap runs at the new rate (`ready`), and the HCA comes back
/// at the next timer expiry if that is earlier (`wake`).
void Core::dcqcn_paced(Qp& qp, const Msg& m, Time now, Time& ready, Time& wake) {
  const double old = qp.rp.rate_bps();
  qp.rp.advance(now);
  dcqcn_rate_changed(qp, old);
  ready = std::max(m.rec.posted + cfg.tx_latency(), qp.next_send_time);
  if (ready > now && qp.rp.limited()) wake = std::min(wake, qp.rp.next_timer());
}

/// The requester sent `wire` bytes of data on `qp` at `now`: byte counter, and the next send time.
void Core::pace(Qp& qp, std::uint32_t wire, std::uint8_t sl, Time now) {
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

/// The reaction point: a CNP (DCQCN) or BECN (IB CC) reaches the requester of QP q.
void Core::on_cnp(std::uint32_t q, std::uint8_t sl) {
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
void Core::notify_congestion(HcaIndex h, const Packet& p) {
  Qp& qp = qps[p.qp];
  const Time now = sim.now();
  const std::uint8_t sl = p.sl;
  const std::uint8_t vl = vl_of(sl);
  if ((p.flags & kFlagCe) && cc_dcqcn) {
    if (qp.last_cnp == Time::max() || now - qp.last_cnp >= Time::from_us(cfg.dcqcn.cnp_interval_us)) {
      qp.last_cnp = now;
      stats.cnps_sent++;
      send_ctrl(h, qp.src, p.qp, Kind::Cnp, sl, vl, cfg.header_bytes + cfg.dcqcn.cnp_bytes);
    }
  }
  if ((p.flags & kFlagFecn) && cc_ibcc) { // every FECN is answered by a BECN
    stats.becns_sent++;
    send_ctrl(h, qp.src, p.qp, Kind::Cnp, sl, vl, cfg.header_bytes + cfg.ibcc.becn_bytes);
  }
}

} // namespace ibn::pkt::detail
