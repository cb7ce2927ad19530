// PFC (RoCE lossless mode, IEEE 802.1Qbb) as the engine models it: per priority (VL), a switch input buffer
// counts the bytes its upstream transmitter has put there; above XOFF it sends a pause frame, below XON a
// resume frame, both taking the frame's serialization plus the propagation to arrive (on the transmitter's
// credit line, as a credit change of -kPfcPause / +kPfcPause). A packet that finds the buffer full (the
// headroom exceeded) is dropped. Ordinary credits keep flowing but never run out (kPfcBase).
#include "models/packet/core.hpp"

namespace ibn::pkt::detail {

/// Thresholds of transmitter `tx` towards its peer's input buffer.
void Core::init_pfc(Tx& tx) const {
  // Pause frames (and, for the ordering of this line, credit bookkeeping) take the frame's serialization
  // plus the propagation.
  tx.ctrl_delay = tx.prop + serialization_time(cfg.pfc.pause_frame_bytes, tx.rate_bps);
  const std::uint64_t max_pkt = cfg.max_packet_wire_bytes();
  std::uint64_t headroom = cfg.pfc.headroom_bytes;
  if (headroom == 0) // 2 x C x t_prop + MTU_S + MTU_R + pause frame + the 3,840-byte response allowance
    headroom = static_cast<std::uint64_t>(2.0 * static_cast<double>(tx.rate_bps) * tx.prop.to_s() / 8.0) +
               2 * max_pkt + cfg.pfc.pause_frame_bytes + 3840;
  tx.pfc_limit = cfg.pfc.buffer_bytes;
  tx.pfc_xoff = headroom < tx.pfc_limit ? tx.pfc_limit - headroom : 0;
  tx.pfc_xon = tx.pfc_xoff > cfg.pfc.resume_offset_bytes ? tx.pfc_xoff - cfg.pfc.resume_offset_bytes : 0;
}

/// The peer switch of `tx` sends XOFF (pause) or XON for priority `vl`; it reaches `tx` after the frame's
/// serialization and the propagation (Tx::ctrl_delay), on the same line as the credits.
void Core::send_pause(Tx& tx, std::uint32_t vl, bool pause) {
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

/// Packet `p` from transmitter `up` reaches its switch's input buffer: false when the buffer is full (the
/// packet is lost, its credits go back); else counted, with a pause frame when it crosses XOFF.
bool Core::pfc_admit(Tx& up, const Packet& p) {
  if (up.pfc_in[p.vl] + p.wire > up.pfc_limit) {
    stats.pfc_drops++;
    up.stats.pfc_drops++;
    push_credits(up, p.vl, p.wire);
    return false;
  }
  up.pfc_in[p.vl] += p.wire;
  if (!(up.pfc_paused >> p.vl & 1u) && up.pfc_in[p.vl] > up.pfc_xoff) send_pause(up, p.vl, true);
  return true;
}

/// A packet of `wire` bytes from `up` has left its switch's input buffer: a resume frame when it falls to
/// XON.
void Core::pfc_left(Tx& up, int vl, std::uint32_t wire) {
  up.pfc_in[vl] -= wire;
  if ((up.pfc_paused >> vl & 1u) && up.pfc_in[vl] <= up.pfc_xon)
    send_pause(up, static_cast<std::uint32_t>(vl), false);
}

} // namespace ibn::pkt::detail
