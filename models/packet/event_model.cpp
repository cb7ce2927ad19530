// The Fast event model's cold parts: the HCA quiet-end test and the invariant checks (event_model.hpp).
#include "models/packet/event_model.hpp"

#include <stdexcept>
#include <string>

namespace ibn::pkt::detail {

/// Shortcut 4: the credits an HCA port's next packet needs when the selection at `end` (select_hca) would
/// certainly find that packet short of credits, else 0. Certain only in the plain case: no ACK/NAK queued,
/// one active role (a requester in the middle of a WRITE or SEND that is ready), and the credits now plus the
/// returns that reach the port by `end` fall short. Sets quiet_vl.
[[gnu::noinline]] std::uint32_t Core::blocked_next(Tx& tx, Time end) {
  const Hca& hca = hcas[tx.owner];
  if (!hca.ctrl.empty() || hca.active.size() != 1 || (hca.active[0] & 1u) != 0) return 0;
  const Qp& qp = qps[hca.active[0] >> 1];
  if (qp.cur_msg == kNil) return 0;
  const Msg& m = msgs[qp.cur_msg];
  const MessageSpec& s = m.rec.spec;
  if (s.verb == Verb::Read || std::max(m.rec.posted + cfg.tx_latency(), qp.next_send_time) > end) return 0;
  const std::uint32_t need = PacketConfig::credits_for(request_wire(s, qp.send_off));
  const std::uint8_t vl = vl_of(s.sl);
  if (credits_reach(tx, vl, need) <= end) return 0;
  tx.quiet_vl = vl;
  return need;
}

namespace {
[[noreturn]] void broken(const Tx& tx, Time now, const std::string& what) {
  throw std::logic_error("event model invariant broken at t=" + std::to_string(now.count_ps()) + " ps on '" +
                         tx.name() + "': " + what);
}
} // namespace

void CheckedTx::on_event(EventTag tag) {
  Tx::on_event(tag);
  core.check_port(*this);
}

/// EventModel::Checked: the invariants of event_model.hpp on port `tx`, after one of its events.
void Core::check_port(const Tx& tx) const {
  const Time now = sim.now();
  if (tx.wake_at != Time::max() && tx.wake_at < now) broken(tx, now, "I5: a kWake time in the past");
  if (tx.credit_at != Time::max() && tx.credit_at < now) broken(tx, now, "I5: a kCredits time in the past");
  const bool quiet_running = tx.busy && tx.quiet_end && now < tx.busy_until;
  const bool idle = !tx.busy || (tx.quiet_end && tx.busy_until <= now);
  if (!incoming_shortcut && !tx.incoming.empty()) broken(tx, now, "an incoming list without shortcut 1");
  if ((idle || quiet_running) && !tx.incoming.empty() &&
      tx.wake_at > std::max(tx.incoming.front_t(), tx.quiet_end ? tx.busy_until : Time::zero()))
    broken(tx, now, "I1: packets in `incoming` and no wake for them");
  if (tx.quiet_end && tx.owner_is_switch) {
    if (quiet_running && tx.queued_packets != 0) broken(tx, now, "I2: a quiet switch output with a queue");
    if (!incoming_shortcut) broken(tx, now, "a quiet switch output without shortcut 1");
  }
  if (tx.quiet_need != 0) {
    if (!hca_quiet || tx.owner_is_switch) broken(tx, now, "I3: quiet_need without shortcut 4");
    if (!tx.quiet_end || !tx.waiting || !tx.stalled || !tx.credit_blocked)
      broken(tx, now, "I3: a quiet HCA not marked waiting, stalled and credit-blocked");
    const Time t = quiet_credit_time(tx);
    if (t != Time::max() && tx.credit_at > t) broken(tx, now, "I3: a quiet HCA without a credit wake");
  } else if (tx.waiting && !tx.busy && !tx.creditq.empty() && tx.credit_at > tx.creditq.front_t()) {
    broken(tx, now, "I4: waiting for credits with returns on their way and no kCredits event");
  }
}

} // namespace ibn::pkt::detail
