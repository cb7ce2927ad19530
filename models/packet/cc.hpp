#pragma once
// Congestion control of the packet engine (model-reference.md §3): the parameters of ECN marking, DCQCN,
// PFC and InfiniBand CC (IBA annex A10), and the per-QP reaction-point state machines. The state machines
// are pure (no Simulation): the engine calls them with the current time when a packet is sent or a
// notification arrives, and they catch up their timers lazily (every timer expiry in between is applied
// in time order), so a paced QP costs no timer event per expiry.
#include "sim/time.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ibn::pkt {

/// Link-level flow control: IB credits (64-byte blocks per VL) or RoCE PFC (pause/resume per priority).
enum class FlowControl : std::uint8_t { Credits, Pfc };
/// End-to-end congestion control at the HCAs.
enum class CcMode : std::uint8_t { None, Dcqcn, IbCc };
/// Where a switch egress queue decides to mark a packet (ECN CE or FECN).
enum class MarkPoint : std::uint8_t { Enqueue, Dequeue };
std::string to_string(FlowControl f);
std::string to_string(CcMode c);
std::string to_string(MarkPoint m);

/// DCQCN (Zhu et al. SIGCOMM'15): congestion point (RED-like ECN marking on the egress queue),
/// notification point (CNP pacing) and reaction point (per-QP rate limiter). Rates in Mb/s, times in us.
struct DcqcnParams {
  std::string profile =
      "nvidia-default"; ///< the profile the values came from (paper, nvidia-default, hpcc-ns3)
  // CP: p(q) = 0 (q <= Kmin), Pmax (q - Kmin)/(Kmax - Kmin) (Kmin < q <= Kmax), 1 (q > Kmax)
  std::uint32_t kmin_bytes = 5'000;   ///< marking starts above this egress queue
  std::uint32_t kmax_bytes = 200'000; ///< every packet is marked above this
  double pmax = 0.01;                 ///< marking probability at Kmax
  MarkPoint mark_point = MarkPoint::Dequeue;
  /// When > 0, Kmin, Kmax, rai and rhai are given for a link of this rate and scale with each port's or
  /// HCA's rate (HPCC ns-3 scales them with the link bandwidth); 0 = absolute values.
  double scale_ref_gbps = 0;
  // NP
  double cnp_interval_us = 4;   ///< at most one CNP per QP per interval (0: one per marked packet)
  std::uint32_t cnp_bytes = 16; ///< CNP payload on the wire (plus header_bytes)
  // RP
  double g = 5.0 / 1024;      ///< alpha gain
  double alpha_timer_us = 1;  ///< K: alpha update period
  bool alpha_on_cnp = false;  ///< paper: alpha rises on each CNP; NVIDIA/HPCC: at the next alpha tick
  double initial_alpha = 1.0; ///< alpha before the first CNP
  double rate_decrease_interval_us = 4;     ///< at most one cut per interval (later CNPs wait for its end)
  double rate_timer_us = 300;               ///< T: rate-increase timer
  std::uint64_t byte_counter_bytes = 32767; ///< B: rate-increase byte counter (0: timer only, HPCC stages)
  int fast_recovery_steps = 1;              ///< F
  double rai_mbps = 5;                      ///< additive increase of the target rate
  double rhai_mbps = 50;                    ///< hyper increase of the target rate
  double min_rate_mbps = 1;                 ///< the rate never falls below this
  double rate_on_first_cnp = 0;             ///< fraction of the line rate set on the first CNP (0: keep)
  bool clamp_target = false;                ///< every cut sets R_T = R_C (false: only after an increase)

  /// Profiles of model-reference.md §3.2: "paper", "nvidia-default", "hpcc-ns3". Throws InputError naming
  /// `what`.
  static DcqcnParams profile_named(const std::string& name, const std::string& what);
  void validate(const std::string& where) const;
  nlohmann::json to_json() const;
  /// "profile" is applied first, then every other key overrides it.
  void apply_json(const nlohmann::json& j, const std::string& where);
};

/// One Congestion Control Table entry (IBA A10): inter-packet delay = (T_maxpkt >> shift) x multiplier,
/// T_maxpkt = time to send one full-MTU packet at the HCA's rate (as Linux hfi1 computes it).
struct CctEntry {
  int shift = 0;      ///< 0..3
  int multiplier = 0; ///< 0..16383
  bool operator==(const CctEntry&) const = default;
};

/// InfiniBand congestion control (IBA Vol.1 annex A10).
struct IbCcParams {
  std::uint32_t threshold_bytes = 65'536; ///< a switch egress port is congested above this queue
  std::uint32_t marking_rate = 0;         ///< packets left unmarked between two FECN marks (0: mark all)
  std::uint32_t min_packet_bytes = 0;     ///< only packets at least this large are marked (Packet_Size)
  MarkPoint mark_point = MarkPoint::Dequeue;
  int ccti_increase = 1; ///< CCTI step per BECN
  int ccti_limit = 127;  ///< largest CCTI (< table size)
  int ccti_min = 0;
  double ccti_timer_us = 20.48; ///< CCTI -= 1 every period (IBA units of 1.024 us: 20)
  bool per_sl = false;          ///< CCTI per (source HCA, SL) instead of per QP
  /// The table; empty = the default: entry i = {shift 3, multiplier i} (delay i/8 of a full packet time).
  std::vector<CctEntry> cct;
  std::uint32_t becn_bytes = 16; ///< the BECN-carrying CN packet's payload (plus header_bytes)

  void validate(const std::string& where) const;
  nlohmann::json to_json() const;
  void apply_json(const nlohmann::json& j, const std::string& where);
  /// The effective table (the default when `cct` is empty), at least ccti_limit + 1 entries.
  std::vector<CctEntry> table() const;
};

/// RoCE priority flow control (IEEE 802.1Qbb) per switch input port and priority (data VL).
struct PfcParams {
  /// Input buffer per port and priority (also the drop limit): XOFF when a packet brings it above
  /// buffer - headroom; XON when it falls to XOFF - resume_offset.
  std::uint32_t buffer_bytes = 524'288;
  /// Room kept above XOFF for the data in flight after a pause (0: computed per port as
  /// 2 x rate x propagation + 2 full packets + pause frame + the 3,840-byte response allowance).
  std::uint32_t headroom_bytes = 0;
  std::uint32_t resume_offset_bytes = 3'072;
  std::uint32_t pause_frame_bytes = 64;

  void validate(const std::string& where) const;
  nlohmann::json to_json() const;
  void apply_json(const nlohmann::json& j, const std::string& where);
};

/// DCQCN reaction point of one QP. Rates in bits/s.
class DcqcnRp {
 public:
  DcqcnRp() = default;
  DcqcnRp(const DcqcnParams& p, double line_bps, double scale);
  /// Applies every timer expiry (alpha, rate increase) and a pending cut up to `now`.
  void advance(Time now);
  /// A CNP arrives.
  void on_cnp(Time now);
  /// `bytes` leave (byte counter).
  void on_sent(Time now, std::uint64_t bytes);
  double rate_bps() const { return rc_; }
  double target_bps() const { return rt_; }
  double alpha() const { return alpha_; }
  bool limited() const { return rc_ < line_; }
  /// The next rate-increase timer expiry (Time::max() before the first CNP).
  Time next_timer() const { return timer_next_; }
  std::uint64_t cuts() const { return cuts_; }

 private:
  void cut(Time t);
  void increase();
  void alpha_ticks(Time now);
  const DcqcnParams* p_ = nullptr;
  double line_ = 0, rc_ = 0, rt_ = 0, alpha_ = 1, rai_ = 0, rhai_ = 0, min_ = 0;
  bool started_ = false, cnp_in_window_ = false, cut_pending_ = false, has_cut_ = false;
  int i_ = 0, j_ = 0, increases_since_cut_ = 0;
  std::uint64_t bc_ = 0, cuts_ = 0;
  Time timer_next_ = Time::max(), alpha_next_ = Time::max(), last_cut_;
  Time T_, K_, decrease_interval_;
};

/// IB CC reaction state of one QP or (HCA, SL): the CCTI with its lazy decrement timer.
class IbCcRp {
 public:
  IbCcRp() = default;
  explicit IbCcRp(const IbCcParams& p) : p_(&p), ccti_(p.ccti_min), timer_(Time::from_us(p.ccti_timer_us)) {}
  void advance(Time now);
  void on_becn(Time now);
  int ccti() const { return ccti_; }

 private:
  const IbCcParams* p_ = nullptr;
  int ccti_ = 0;
  Time timer_, next_tick_ = Time::max();
};

} // namespace ibn::pkt
