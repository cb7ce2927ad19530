#include "models/packet/cc.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cmath>

namespace ibn::pkt {

std::string to_string(FlowControl f) {
  return f == FlowControl::Credits ? "credits" : "pfc";
}
std::string to_string(CcMode c) {
  switch (c) {
  case CcMode::None:
    return "none";
  case CcMode::Dcqcn:
    return "dcqcn";
  case CcMode::IbCc:
    return "ibcc";
  }
  return "?";
}
std::string to_string(MarkPoint m) {
  return m == MarkPoint::Enqueue ? "enqueue" : "dequeue";
}

namespace {

double number(const nlohmann::json& v, const std::string& path) {
  if (!v.is_number()) throw InputError(path + ": expected a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) throw InputError(path + ": must be a finite number >= 0");
  return d;
}
std::uint64_t whole(const nlohmann::json& v, const std::string& path) {
  const double d = number(v, path);
  if (d != std::floor(d) || d > 1e15) throw InputError(path + ": expected a whole number");
  return static_cast<std::uint64_t>(d);
}
std::uint32_t whole32(const nlohmann::json& v, const std::string& path) {
  const std::uint64_t x = whole(v, path);
  if (x > 0xffffffffull) throw InputError(path + ": too large");
  return static_cast<std::uint32_t>(x);
}
bool boolean(const nlohmann::json& v, const std::string& path) {
  if (!v.is_boolean()) throw InputError(path + ": expected true or false");
  return v.get<bool>();
}
MarkPoint mark_point(const nlohmann::json& v, const std::string& path) {
  const std::string s = v.is_string() ? v.get<std::string>() : "";
  if (s == "enqueue") return MarkPoint::Enqueue;
  if (s == "dequeue") return MarkPoint::Dequeue;
  throw InputError(path + ": expected \"enqueue\" or \"dequeue\"");
}

} // namespace

// ------------------------------------------------------------------------------------------------ DCQCN
DcqcnParams DcqcnParams::profile_named(const std::string& name, const std::string& what) {
  DcqcnParams p; // the defaults are nvidia-default
  if (name == "nvidia-default") return p;
  if (name == "paper") {
    // Zhu et al. SIGCOMM'15 (40G): Kmin 5 KB, Kmax 200 KB, Pmax 1 %, g 1/256, K 55 us, N 50 us, T 55 us,
    // B 10 MB, F 5, R_AI 40 Mb/s; R_HAI and min rate from the authors' ns-3 (200 and 100 Mb/s).
    p.profile = name;
    p.cnp_interval_us = 50;
    p.g = 1.0 / 256;
    p.alpha_timer_us = 55;
    p.alpha_on_cnp = true;
    p.rate_decrease_interval_us = 50;
    p.rate_timer_us = 55;
    p.byte_counter_bytes = 10'000'000;
    p.fast_recovery_steps = 5;
    p.rai_mbps = 40;
    p.rhai_mbps = 200;
    p.min_rate_mbps = 100;
    p.clamp_target = true;
    return p;
  }
  if (name == "hpcc-ns3") {
    // HPCC's ns-3 `run.py --cc dcqcn`: Kmin 4 KB x Gb/s, Kmax 16 KB x Gb/s, Pmax 0.2, AI 5 x bw/25 Mb/s,
    // HAI 50 x bw/25 Mb/s (given here at 100 Gb/s and scaled), g 1/256 at 1 us, cut <= every 4 us, T 300 us,
    // no byte counter, F 1, min rate 1 Gb/s, CNP on every ACK of a marked packet.
    p.profile = name;
    p.kmin_bytes = 400'000;
    p.kmax_bytes = 1'600'000;
    p.pmax = 0.2;
    p.scale_ref_gbps = 100;
    p.cnp_interval_us = 0;
    p.g = 1.0 / 256;
    p.alpha_timer_us = 1;
    p.rate_decrease_interval_us = 4;
    p.rate_timer_us = 300;
    p.byte_counter_bytes = 0;
    p.fast_recovery_steps = 1;
    p.rai_mbps = 20;
    p.rhai_mbps = 200;
    p.min_rate_mbps = 1000;
    return p;
  }
  throw InputError(what + ": unknown DCQCN profile '" + name +
                   "' (expected paper, nvidia-default or hpcc-ns3)");
}

void DcqcnParams::validate(const std::string& where) const {
  auto bad = [&](const std::string& key, const std::string& msg) {
    throw InputError(where + "." + key + ": " + msg);
  };
  if (kmax_bytes < kmin_bytes) bad("kmax_bytes", "must be >= kmin_bytes");
  if (!(pmax > 0 && pmax <= 1)) bad("pmax", "must be in (0, 1]");
  if (!(g > 0 && g < 1)) bad("g", "must be in (0, 1)");
  if (!(alpha_timer_us > 0)) bad("alpha_timer_us", "must be > 0");
  if (!(rate_timer_us > 0)) bad("rate_timer_us", "must be > 0");
  if (!(initial_alpha >= 0 && initial_alpha <= 1)) bad("initial_alpha", "must be in [0, 1]");
  if (fast_recovery_steps < 0 || fast_recovery_steps > 1000) bad("fast_recovery_steps", "must be 0..1000");
  if (!(min_rate_mbps > 0)) bad("min_rate_mbps", "must be > 0");
  if (!(rate_on_first_cnp >= 0 && rate_on_first_cnp <= 1)) bad("rate_on_first_cnp", "must be in [0, 1]");
  if (!(cnp_interval_us >= 0 && rate_decrease_interval_us >= 0)) bad("cnp_interval_us", "must be >= 0");
}

nlohmann::json DcqcnParams::to_json() const {
  return {{"profile", profile},
          {"kmin_bytes", kmin_bytes},
          {"kmax_bytes", kmax_bytes},
          {"pmax", pmax},
          {"mark_point", to_string(mark_point)},
          {"scale_ref_gbps", scale_ref_gbps},
          {"cnp_interval_us", cnp_interval_us},
          {"cnp_bytes", cnp_bytes},
          {"g", g},
          {"alpha_timer_us", alpha_timer_us},
          {"alpha_on_cnp", alpha_on_cnp},
          {"initial_alpha", initial_alpha},
          {"rate_decrease_interval_us", rate_decrease_interval_us},
          {"rate_timer_us", rate_timer_us},
          {"byte_counter_bytes", byte_counter_bytes},
          {"fast_recovery_steps", fast_recovery_steps},
          {"rai_mbps", rai_mbps},
          {"rhai_mbps", rhai_mbps},
          {"min_rate_mbps", min_rate_mbps},
          {"rate_on_first_cnp", rate_on_first_cnp},
          {"clamp_target", clamp_target}};
}

void DcqcnParams::apply_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object of DCQCN settings");
  if (j.contains("profile")) {
    const auto& v = j.at("profile");
    if (!v.is_string()) throw InputError(where + ".profile: expected a string");
    *this = profile_named(v.get<std::string>(), where + ".profile");
  }
  for (const auto& [key, v] : j.items()) {
    const std::string path = where + "." + key;
    if (key == "profile") continue;
    if (key == "kmin_bytes")
      kmin_bytes = whole32(v, path);
    else if (key == "kmax_bytes")
      kmax_bytes = whole32(v, path);
    else if (key == "pmax")
      pmax = number(v, path);
    else if (key == "mark_point")
      mark_point = pkt::mark_point(v, path);
    else if (key == "scale_ref_gbps")
      scale_ref_gbps = number(v, path);
    else if (key == "cnp_interval_us")
      cnp_interval_us = number(v, path);
    else if (key == "cnp_bytes")
      cnp_bytes = whole32(v, path);
    else if (key == "g")
      g = number(v, path);
    else if (key == "alpha_timer_us")
      alpha_timer_us = number(v, path);
    else if (key == "alpha_on_cnp")
      alpha_on_cnp = boolean(v, path);
    else if (key == "initial_alpha")
      initial_alpha = number(v, path);
    else if (key == "rate_decrease_interval_us")
      rate_decrease_interval_us = number(v, path);
    else if (key == "rate_timer_us")
      rate_timer_us = number(v, path);
    else if (key == "byte_counter_bytes")
      byte_counter_bytes = whole(v, path);
    else if (key == "fast_recovery_steps")
      fast_recovery_steps = static_cast<int>(whole32(v, path));
    else if (key == "rai_mbps")
      rai_mbps = number(v, path);
    else if (key == "rhai_mbps")
      rhai_mbps = number(v, path);
    else if (key == "min_rate_mbps")
      min_rate_mbps = number(v, path);
    else if (key == "rate_on_first_cnp")
      rate_on_first_cnp = number(v, path);
    else if (key == "clamp_target")
      clamp_target = boolean(v, path);
    else
      throw InputError(path + ": unknown key");
  }
  validate(where);
}

DcqcnRp::DcqcnRp(const DcqcnParams& p, double line_bps, double scale)
    : p_(&p), line_(line_bps), rc_(line_bps), rt_(line_bps), alpha_(p.initial_alpha),
      rai_(p.rai_mbps * 1e6 * scale), rhai_(p.rhai_mbps * 1e6 * scale),
      min_(std::min(p.min_rate_mbps * 1e6, line_bps)), T_(Time::from_us(p.rate_timer_us)),
      K_(Time::from_us(p.alpha_timer_us)), decrease_interval_(Time::from_us(p.rate_decrease_interval_us)) {}

void DcqcnRp::alpha_ticks(Time t) {
  if (alpha_next_ > t) return;
  const std::int64_t n = (t - alpha_next_).count_ps() / K_.count_ps() + 1;
  // First tick: the window that saw a CNP (NVIDIA/HPCC: alpha rises now), else decay; later ticks decay.
  const double g = p_->g;
  alpha_ = (1 - g) * alpha_ + (cnp_in_window_ ? g : 0.0);
  cnp_in_window_ = false;
  if (n > 1) alpha_ *= std::pow(1 - g, static_cast<double>(n - 1));
  alpha_next_ += K_ * n;
}

void DcqcnRp::advance(Time now) {
  if (!started_) return;
  for (;;) {
    const Time tc = cut_pending_ ? last_cut_ + decrease_interval_ : Time::max();
    if (timer_next_ <= now && timer_next_ < tc) {
      if (rc_ >= line_ && rt_ >= line_) { // at line rate: further expiries change nothing but the count
        const Time lim = std::min(now, tc - Time::ps(1));
        const std::int64_t n = (lim - timer_next_).count_ps() / T_.count_ps() + 1;
        i_ = static_cast<int>(std::min<std::int64_t>(i_ + n, 1 << 20));
        timer_next_ += T_ * n;
        continue;
      }
      alpha_ticks(timer_next_);
      ++i_;
      increase();
      timer_next_ += T_;
      continue;
    }
    if (tc <= now) {
      alpha_ticks(tc);
      cut(tc);
      continue;
    }
    break;
  }
  alpha_ticks(now);
}

void DcqcnRp::on_cnp(Time now) {
  if (!started_) {
    started_ = true;
    alpha_next_ = now + K_;
    if (p_->rate_on_first_cnp > 0) rc_ = std::max(min_, p_->rate_on_first_cnp * line_);
  }
  advance(now);
  if (p_->alpha_on_cnp) { // paper: alpha rises per CNP; it decays after K without one
    alpha_ = (1 - p_->g) * alpha_ + p_->g;
    alpha_next_ = now + K_;
  } else {
    cnp_in_window_ = true;
  }
  if (!has_cut_ || now >= last_cut_ + decrease_interval_)
    cut(now);
  else
    cut_pending_ = true; // applied when the decrease interval ends
}

void DcqcnRp::on_sent(Time now, std::uint64_t bytes) {
  if (!started_) return;
  advance(now);
  const std::uint64_t B = p_->byte_counter_bytes;
  if (B == 0) return;
  bc_ += bytes;
  while (bc_ >= B) {
    bc_ -= B;
    ++j_;
    increase();
  }
}

void DcqcnRp::cut(Time t) {
  if (p_->clamp_target || increases_since_cut_ > 0 || !has_cut_) rt_ = rc_;
  rc_ = std::max(min_, rc_ * (1 - alpha_ / 2));
  has_cut_ = true;
  cut_pending_ = false;
  last_cut_ = t;
  timer_next_ = t + T_;
  i_ = j_ = 0;
  bc_ = 0;
  increases_since_cut_ = 0;
  ++cuts_;
}

void DcqcnRp::increase() {
  ++increases_since_cut_;
  const int F = p_->fast_recovery_steps;
  enum { Fast, Additive, Hyper } stage;
  if (p_->byte_counter_bytes == 0) { // timer only (HPCC): stage = expiries before this one vs F
    const int s = i_ - 1;
    stage = s < F ? Fast : (s == F ? Additive : Hyper);
  } else {
    stage = std::max(i_, j_) < F ? Fast : (std::min(i_, j_) >= F ? Hyper : Additive);
  }
  if (stage == Additive) rt_ += rai_;
  if (stage == Hyper) rt_ += rhai_;
  rt_ = std::min(rt_, line_);
  rc_ = std::min(line_, (rt_ + rc_) / 2);
  // Within 1e-4 of the line rate counts as the line rate: the pacing gap would otherwise exceed the
  // serialization time by a few picoseconds and cost the HCA a timer event per packet.
  if (rc_ > line_ * (1 - 1e-4)) rc_ = line_;
}

// ------------------------------------------------------------------------------------------------ IB CC
void IbCcParams::validate(const std::string& where) const {
  auto bad = [&](const std::string& key, const std::string& msg) {
    throw InputError(where + "." + key + ": " + msg);
  };
  if (ccti_increase < 0 || ccti_increase > 1000) bad("ccti_increase", "must be 0..1000");
  if (ccti_min < 0 || ccti_limit < ccti_min || ccti_limit > 16383)
    bad("ccti_limit", "need 0 <= ccti_min <= ccti_limit <= 16383");
  if (!(ccti_timer_us > 0)) bad("ccti_timer_us", "must be > 0");
  if (!cct.empty() && cct.size() < static_cast<std::size_t>(ccti_limit) + 1)
    bad("cct", "has " + std::to_string(cct.size()) + " entries; ccti_limit " + std::to_string(ccti_limit) +
                   " needs " + std::to_string(ccti_limit + 1));
  for (const auto& e : cct)
    if (e.shift < 0 || e.shift > 3 || e.multiplier < 0 || e.multiplier > 16383)
      bad("cct", "entries are [shift 0..3, multiplier 0..16383]");
}

nlohmann::json IbCcParams::to_json() const {
  nlohmann::json t = nlohmann::json::array();
  for (const auto& e : cct) t.push_back({e.shift, e.multiplier});
  return {{"threshold_bytes", threshold_bytes},
          {"marking_rate", marking_rate},
          {"min_packet_bytes", min_packet_bytes},
          {"mark_point", to_string(mark_point)},
          {"ccti_increase", ccti_increase},
          {"ccti_limit", ccti_limit},
          {"ccti_min", ccti_min},
          {"ccti_timer_us", ccti_timer_us},
          {"per_sl", per_sl},
          {"cct", t},
          {"becn_bytes", becn_bytes}};
}

void IbCcParams::apply_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object of IB CC settings");
  for (const auto& [key, v] : j.items()) {
    const std::string path = where + "." + key;
    if (key == "threshold_bytes")
      threshold_bytes = whole32(v, path);
    else if (key == "marking_rate")
      marking_rate = whole32(v, path);
    else if (key == "min_packet_bytes")
      min_packet_bytes = whole32(v, path);
    else if (key == "mark_point")
      mark_point = pkt::mark_point(v, path);
    else if (key == "ccti_increase")
      ccti_increase = static_cast<int>(whole32(v, path));
    else if (key == "ccti_limit")
      ccti_limit = static_cast<int>(whole32(v, path));
    else if (key == "ccti_min")
      ccti_min = static_cast<int>(whole32(v, path));
    else if (key == "ccti_timer_us")
      ccti_timer_us = number(v, path);
    else if (key == "per_sl")
      per_sl = boolean(v, path);
    else if (key == "becn_bytes")
      becn_bytes = whole32(v, path);
    else if (key == "cct") {
      if (!v.is_array()) throw InputError(path + ": expected an array of [shift, multiplier] pairs");
      cct.clear();
      for (std::size_t i = 0; i < v.size(); ++i) {
        const auto& e = v[i];
        const std::string ep = path + "[" + std::to_string(i) + "]";
        if (!e.is_array() || e.size() != 2) throw InputError(ep + ": expected [shift, multiplier]");
        cct.push_back({static_cast<int>(whole32(e[0], ep)), static_cast<int>(whole32(e[1], ep))});
      }
    } else
      throw InputError(path + ": unknown key");
  }
  validate(where);
}

std::vector<CctEntry> IbCcParams::table() const {
  if (!cct.empty()) return cct;
  std::vector<CctEntry> t;
  for (int i = 0; i <= ccti_limit; ++i) t.push_back({3, i});
  return t;
}

void IbCcRp::advance(Time now) {
  if (next_tick_ > now) return;
  const std::int64_t n = (now - next_tick_).count_ps() / timer_.count_ps() + 1;
  ccti_ = static_cast<int>(std::max<std::int64_t>(p_->ccti_min, ccti_ - n));
  next_tick_ = ccti_ == p_->ccti_min ? Time::max() : next_tick_ + timer_ * n;
}

void IbCcRp::on_becn(Time now) {
  advance(now);
  ccti_ = std::min(p_->ccti_limit, ccti_ + p_->ccti_increase);
  if (next_tick_ == Time::max() && ccti_ > p_->ccti_min) next_tick_ = now + timer_;
}

// ------------------------------------------------------------------------------------------------ PFC
void PfcParams::validate(const std::string& where) const {
  if (resume_offset_bytes == 0) throw InputError(where + ".resume_offset_bytes: must be > 0");
  if (pause_frame_bytes == 0) throw InputError(where + ".pause_frame_bytes: must be > 0");
  if (headroom_bytes != 0 && headroom_bytes + resume_offset_bytes >= buffer_bytes)
    throw InputError(where + ".headroom_bytes: headroom + resume offset must stay below buffer_bytes");
}

nlohmann::json PfcParams::to_json() const {
  return {{"buffer_bytes", buffer_bytes},
          {"headroom_bytes", headroom_bytes},
          {"resume_offset_bytes", resume_offset_bytes},
          {"pause_frame_bytes", pause_frame_bytes}};
}

void PfcParams::apply_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object of PFC settings");
  for (const auto& [key, v] : j.items()) {
    const std::string path = where + "." + key;
    if (key == "buffer_bytes")
      buffer_bytes = whole32(v, path);
    else if (key == "headroom_bytes")
      headroom_bytes = whole32(v, path);
    else if (key == "resume_offset_bytes")
      resume_offset_bytes = whole32(v, path);
    else if (key == "pause_frame_bytes")
      pause_frame_bytes = whole32(v, path);
    else
      throw InputError(path + ": unknown key");
  }
  validate(where);
}

} // namespace ibn::pkt
