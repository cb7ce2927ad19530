#include "calibration/profile.hpp"

#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/json_text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace ibn::calib {
namespace {

using nlohmann::json;

/// Cable propagation as topology does it: DAC up to 5 m (4.76 ns/m), fibre beyond (5.13 ns/m).
double cable_ns(double m) {
  return m * (m <= 5.0 ? 4.76 : 5.13);
}

std::string fmt_g(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

double interp_knots(const std::vector<std::pair<double, double>>& k, double p) {
  if (k.empty()) return 0;
  if (p <= k.front().first) return k.front().second;
  for (std::size_t i = 1; i < k.size(); ++i)
    if (p <= k[i].first) {
      const auto [p0, x0] = k[i - 1];
      const auto [p1, x1] = k[i];
      return p1 > p0 ? x0 + (x1 - x0) * (p - p0) / (p1 - p0) : x1;
    }
  return k.back().second;
}

// ---- JSON reading with path-naming errors ---------------------------------------------------------
struct Reader {
  std::string source;

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw InputError(source + ": " + path + ": " + msg);
  }
  void keys(const json& j, const std::string& path, std::initializer_list<const char*> allowed) const {
    if (!j.is_object()) fail(path, "expected an object");
    for (const auto& [k, v] : j.items()) {
      (void)v;
      bool ok = false;
      for (const char* a : allowed) ok = ok || k == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
        fail(path + "." + k, "unknown key (expected one of: " + list + ")");
      }
    }
  }
  const json& need(const json& j, const std::string& path, const char* key) const {
    if (!j.contains(key)) fail(path + "." + key, "missing");
    return j.at(key);
  }
  double num(const json& j, const std::string& path) const {
    if (!j.is_number()) fail(path, "expected a number");
    const double d = j.get<double>();
    if (!std::isfinite(d)) fail(path, "expected a finite number");
    return d;
  }
  double nonneg(const json& j, const std::string& path) const {
    const double d = num(j, path);
    if (d < 0) fail(path, "must not be negative");
    return d;
  }
  std::uint64_t u64(const json& j, const std::string& path) const {
    const double d = nonneg(j, path);
    if (d != std::floor(d) || d > 1.8e19) fail(path, "expected a whole number");
    return j.is_number_unsigned() ? j.get<std::uint64_t>() : static_cast<std::uint64_t>(d);
  }
  std::string str(const json& j, const std::string& path) const {
    if (!j.is_string()) fail(path, "expected a string");
    return j.get<std::string>();
  }
  const json& arr(const json& j, const std::string& path) const {
    if (!j.is_array()) fail(path, "expected an array");
    return j;
  }
  FitParam param(const json& j, const std::string& path, const std::string& unit) const {
    keys(j, path, {"value", "unit", "r2", "max_residual", "residual_unit", "points"});
    FitParam p;
    p.value = num(need(j, path, "value"), path + ".value");
    p.unit = str(need(j, path, "unit"), path + ".unit");
    if (p.unit != unit) fail(path + ".unit", "expected \"" + unit + "\", got \"" + p.unit + "\"");
    if (j.contains("r2")) p.r2 = num(j["r2"], path + ".r2");
    if (j.contains("max_residual")) p.max_residual = nonneg(j["max_residual"], path + ".max_residual");
    if (j.contains("residual_unit")) p.residual_unit = str(j["residual_unit"], path + ".residual_unit");
    if (j.contains("points")) p.points = u64(j["points"], path + ".points");
    return p;
  }
};

json param_json(const FitParam& p) {
  return {{"value", p.value},
          {"unit", p.unit},
          {"r2", p.r2},
          {"max_residual", p.max_residual},
          {"residual_unit", p.residual_unit},
          {"points", p.points}};
}

double ns_of(const Time& t) {
  return static_cast<double>(t.count_ps()) * 1e-3;
}

} // namespace

// ---- NoiseModel ------------------------------------------------------------------------------------
const NoiseSegment* NoiseModel::segment_for(std::uint64_t size) const {
  if (segments.empty()) return nullptr;
  const NoiseSegment* best = &segments.front();
  for (const auto& s : segments)
    if (s.lo_bytes <= size) best = &s;
  return best;
}

double NoiseModel::quantile_ns(std::uint64_t size, double p) const {
  const NoiseSegment* s = segment_for(size);
  return s ? interp_knots(s->knots, p) : 0.0;
}

Time NoiseModel::draw(Rng& rng, std::uint64_t size) const {
  const NoiseSegment* s = segment_for(size);
  if (s == nullptr) return Time::zero();
  return Time::ps(std::llround(interp_knots(s->knots, rng.uniform01()) * 1e3));
}

// ---- Profile ---------------------------------------------------------------------------------------
double bandwidth_message_ns(double o, double c, double p, double S) {
  // (o^p + (cS)^p)^(1/p), scaled by the larger term so that no power overflows.
  const double a = o, b = c * S, m = std::max(a, b);
  if (!(m > 0)) return 0.0;
  if (p == 1.0) return a + b;
  return m * std::pow(std::pow(a / m, p) + std::pow(b / m, p), 1.0 / p);
}

std::optional<double> Profile::latency_ns(std::uint64_t size) const {
  if (latency.empty()) return std::nullopt;
  const LatencySegment* seg = &latency.front();
  for (const auto& s : latency)
    if (s.lo_bytes <= size) seg = &s;
  return seg->a.value + seg->b.value * static_cast<double>(size);
}

std::optional<double> Profile::bandwidth_gbps(std::uint64_t size) const {
  if (!bw_rate || !bw_overhead) return std::nullopt;
  const double s = static_cast<double>(size);
  const double t_ns = bandwidth_message_ns(bw_overhead->value, 8.0 / bw_rate->value, // B: bits per ns
                                           bw_overlap ? bw_overlap->value : 1.0, s);
  return t_ns > 0 ? s * 8.0 / t_ns : 0.0;
}

std::optional<topo::LinkSpeed> link_speed_for_rate(double gbps) {
  using topo::Generation;
  for (int width : {4, 1, 2, 8, 12})
    for (Generation g :
         {Generation::SDR, Generation::DDR, Generation::QDR, Generation::FDR10, Generation::FDR,
          Generation::EDR, Generation::HDR, Generation::NDR, Generation::XDR}) {
      const topo::LinkSpeed s{g, width};
      if (std::abs(s.rate_gbps() - gbps) <= 0.005 * gbps) return s;
    }
  return std::nullopt;
}

topo::LinkSpeed Profile::engine_link_speed() const {
  using topo::Generation;
  if (link_rate_gbps > 0)
    if (auto s = link_speed_for_rate(link_rate_gbps)) return *s;
  if (bw_rate)
    for (Generation g : {Generation::QDR, Generation::FDR, Generation::EDR, Generation::HDR, Generation::NDR,
                         Generation::XDR}) {
      const topo::LinkSpeed s{g, 4};
      if (s.rate_gbps() * header_efficiency() >= bw_rate->value * (1 - 1e-9)) return s;
    }
  return topo::LinkSpeed{Generation::NDR, 4};
}

double Profile::engine_one_way_ns(std::uint64_t size) const {
  const double link = engine_link_speed().rate_gbps(); // bits per ns
  const double cap = hca_rate_gbps > 0 && (link <= 0 || hca_rate_gbps < link) ? hca_rate_gbps : link;
  double wire = 0;
  if (link > 0) {
    // Packets leave at the capped rate, the last one is serialized at the link rate.
    const std::uint64_t mtu = mtu_bytes;
    const std::uint64_t npk = std::max<std::uint64_t>(1, (size + mtu - 1) / mtu);
    const std::uint64_t last = size - (npk - 1) * mtu;
    wire = static_cast<double>((npk - 1) * (mtu + header_bytes)) * 8.0 / cap +
           static_cast<double>(last + header_bytes) * 8.0 / link;
  }
  return ns_of(nic_tx_latency) + ns_of(nic_rx_latency) + hops * ns_of(switch_latency) +
         (hops + 1) * cable_ns(cable_m) + wire;
}

Time Profile::host_latency(std::uint64_t size) const {
  const auto l = latency_ns(size);
  if (!l) return Time::zero();
  const NoiseSegment* ns = noise.segment_for(size);
  const double extra = *l - (ns ? ns->sample_median_ns : 0.0) - engine_one_way_ns(size);
  return extra > 0 ? Time::ps(std::llround(extra * 1e3)) : Time::zero();
}

Time Profile::post_spacing(std::uint64_t size) const {
  if (message_gap.count_ps() == 0 && !bw_rate) return Time::zero();
  const double c = bw_rate && bw_rate->value > 0 ? 8.0 / bw_rate->value : 0.0;
  const double ns = bandwidth_message_ns(ns_of(message_gap), c, bw_overlap ? bw_overlap->value : 1.0,
                                         static_cast<double>(size));
  return Time::ps(std::llround(ns * 1e3));
}

json Profile::to_json() const {
  json j;
  j["schema_version"] = kProfileSchemaVersion; // the format written is this build's, whatever was read
  j["generator"] = generator;
  if (!manifest.is_null()) j["manifest"] = manifest;
  j["hash_algorithm"] = "fnv1a64 of each input file's bytes";
  json ins = json::array();
  for (const auto& in : inputs)
    ins.push_back({{"file", in.file},
                   {"hash", in.fnv1a64},
                   {"bytes", in.bytes},
                   {"tests", in.tests},
                   {"hops", in.hops}});
  j["inputs"] = ins;
  json dev{{"names", devices},
           {"link_layer", link_layer == pkt::LinkLayer::RoCEv2 ? "rocev2" : "ib"},
           {"mtu_bytes", mtu_bytes},
           {"link_rate_gbps", link_rate_gbps},
           {"link_rate_source", link_rate_source},
           {"header_bytes", header_bytes},
           {"header_efficiency", header_efficiency()}};
  if (max_inline_bytes) dev["max_inline_bytes"] = *max_inline_bytes;
  j["device"] = dev;
  j["measurement"] = {{"hops", hops}, {"cable_m", cable_m}};
  json lat = json::array();
  for (const auto& s : latency)
    lat.push_back({{"lo_bytes", s.lo_bytes},
                   {"hi_bytes", s.hi_bytes},
                   {"a", param_json(s.a)},
                   {"b", param_json(s.b)},
                   {"note", s.note}});
  j["latency"] = {{"model", "one-way median latency (t_typical; RTT/2 for write/send) = a + b*S per segment"},
                  {"segments", lat}};
  json bw = json::object();
  bw["model"] = "BW(S) = S / (o^p + (S/B)^p)^(1/p)";
  if (bw_overhead) bw["o"] = param_json(*bw_overhead);
  if (bw_rate) bw["B"] = param_json(*bw_rate);
  if (bw_overlap) bw["p"] = param_json(*bw_overlap);
  bw["B_bounded_by_link"] = bw_rate_bounded;
  j["bandwidth"] = bw;
  if (switch_latency_fit) j["switch"] = {{"latency", param_json(*switch_latency_fit)}};
  json ns = json::array();
  for (const auto& s : noise.segments) {
    json knots = json::array();
    for (const auto& [p, x] : s.knots) knots.push_back({{"p", p}, {"extra_ns", x}});
    ns.push_back({{"lo_bytes", s.lo_bytes},
                  {"hi_bytes", s.hi_bytes},
                  {"points", s.points},
                  {"sample_median_ns", s.sample_median_ns},
                  {"quantiles", knots}});
  }
  j["noise"] = {{"model", "per-operation extra latency, inverse CDF linear between (p, extra_ns) knots"},
                {"segments", ns}};
  j["engine"] = {{"nic_tx_latency_ns", ns_of(nic_tx_latency)},
                 {"nic_rx_latency_ns", ns_of(nic_rx_latency)},
                 {"switch_latency_ns", ns_of(switch_latency)},
                 {"switch_latency_source", switch_latency_source},
                 {"hca_rate_gbps", hca_rate_gbps},
                 {"message_gap_ns", ns_of(message_gap)}};
  if (nccl) {
    j["nccl"] = {{"model",
                  "per collective: base + net_steps x net_step (+ NCCL's intra-node step costs); replaces "
                  "NCCL's table values for this protocol"},
                 {"version", nccl->version},
                 {"protocol", nccl->protocol},
                 {"base", param_json(nccl->base)},
                 {"net_step", param_json(nccl->net_step)},
                 {"base_fixed", nccl->base_fixed},
                 {"max_bytes", nccl->max_bytes},
                 {"sources", nccl->sources}};
  }
  if (!host.empty()) j["host"] = host;
  if (variability) j["variability"] = variability->to_json();
  j["warnings"] = warnings;
  return j;
}

Profile Profile::from_json(const json& j, const std::string& source) {
  const Reader r{source};
  r.keys(j, "$",
         {"schema_version", "generator", "manifest", "hash_algorithm", "inputs", "device", "measurement",
          "latency", "bandwidth", "switch", "noise", "nccl", "engine", "warnings", "variability", "host"});
  Profile p;
  p.schema_version = static_cast<int>(r.u64(r.need(j, "$", "schema_version"), "$.schema_version"));
  if (p.schema_version < kProfileOldestSchemaVersion || p.schema_version > kProfileSchemaVersion)
    r.fail("$.schema_version", "unsupported version " + std::to_string(p.schema_version) +
                                   " (this build reads " + std::to_string(kProfileOldestSchemaVersion) +
                                   " to " + std::to_string(kProfileSchemaVersion) + ")");
  if (j.contains("generator")) p.generator = r.str(j["generator"], "$.generator");
  if (j.contains("manifest")) {
    const json& m = j["manifest"];
    r.keys(m, "$.manifest", {"tool", "command", "version", "build", "inputs", "options"});
    for (const char* k : {"tool", "command", "version", "build"})
      if (m.contains(k)) (void)r.str(m[k], std::string("$.manifest.") + k);
    if (m.contains("options") && !m["options"].is_object())
      r.fail("$.manifest.options", "expected an object");
    if (m.contains("inputs")) {
      const json& ins = r.arr(m["inputs"], "$.manifest.inputs");
      for (std::size_t i = 0; i < ins.size(); ++i) {
        const std::string path = "$.manifest.inputs[" + std::to_string(i) + "]";
        r.keys(ins[i], path, {"file", "hash", "bytes"});
        (void)r.str(r.need(ins[i], path, "file"), path + ".file");
        (void)r.str(r.need(ins[i], path, "hash"), path + ".hash");
        if (ins[i].contains("bytes")) (void)r.u64(ins[i]["bytes"], path + ".bytes");
      }
    }
    p.manifest = m;
  }
  if (j.contains("hash_algorithm")) (void)r.str(j["hash_algorithm"], "$.hash_algorithm");
  if (j.contains("inputs")) {
    const json& ins = r.arr(j["inputs"], "$.inputs");
    for (std::size_t i = 0; i < ins.size(); ++i) {
      const std::string path = "$.inputs[" + std::to_string(i) + "]";
      r.keys(ins[i], path, {"file", "hash", "bytes", "tests", "hops"});
      ProfileInput in;
      in.file = r.str(r.need(ins[i], path, "file"), path + ".file");
      in.fnv1a64 = r.str(r.need(ins[i], path, "hash"), path + ".hash");
      if (ins[i].contains("bytes")) in.bytes = r.u64(ins[i]["bytes"], path + ".bytes");
      if (ins[i].contains("hops")) in.hops = static_cast<int>(r.u64(ins[i]["hops"], path + ".hops"));
      if (ins[i].contains("tests")) {
        const json& t = r.arr(ins[i]["tests"], path + ".tests");
        for (std::size_t k = 0; k < t.size(); ++k)
          in.tests.push_back(r.str(t[k], path + ".tests[" + std::to_string(k) + "]"));
      }
      p.inputs.push_back(std::move(in));
    }
  }
  const json& dev = r.need(j, "$", "device");
  r.keys(dev, "$.device",
         {"names", "link_layer", "mtu_bytes", "link_rate_gbps", "link_rate_source", "header_bytes",
          "header_efficiency", "max_inline_bytes"});
  if (dev.contains("names")) {
    const json& n = r.arr(dev["names"], "$.device.names");
    for (std::size_t k = 0; k < n.size(); ++k)
      p.devices.push_back(r.str(n[k], "$.device.names[" + std::to_string(k) + "]"));
  }
  const std::string ll = r.str(r.need(dev, "$.device", "link_layer"), "$.device.link_layer");
  if (ll == "ib") {
    p.link_layer = pkt::LinkLayer::InfiniBand;
    p.header_bytes = common::kIbHeaderBytes;
  } else if (ll == "rocev2") {
    p.link_layer = pkt::LinkLayer::RoCEv2;
    p.header_bytes = common::kRoceV2HeaderBytes;
  } else {
    r.fail("$.device.link_layer", "expected \"ib\" or \"rocev2\", got \"" + ll + "\"");
  }
  const auto mtu = r.u64(r.need(dev, "$.device", "mtu_bytes"), "$.device.mtu_bytes");
  if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
    r.fail("$.device.mtu_bytes", "expected 256, 512, 1024, 2048 or 4096, got " + std::to_string(mtu));
  p.mtu_bytes = static_cast<std::uint32_t>(mtu);
  if (dev.contains("link_rate_gbps"))
    p.link_rate_gbps = r.nonneg(dev["link_rate_gbps"], "$.device.link_rate_gbps");
  if (dev.contains("link_rate_source"))
    p.link_rate_source = r.str(dev["link_rate_source"], "$.device.link_rate_source");
  if (dev.contains("header_bytes")) {
    const auto hb = r.u64(dev["header_bytes"], "$.device.header_bytes");
    if (hb == 0 || hb > 256) r.fail("$.device.header_bytes", "must be 1..256");
    p.header_bytes = static_cast<std::uint32_t>(hb);
  }
  if (dev.contains("header_efficiency")) (void)r.num(dev["header_efficiency"], "$.device.header_efficiency");
  if (dev.contains("max_inline_bytes"))
    p.max_inline_bytes =
        static_cast<std::uint32_t>(r.u64(dev["max_inline_bytes"], "$.device.max_inline_bytes"));

  if (j.contains("measurement")) {
    const json& m = j["measurement"];
    r.keys(m, "$.measurement", {"hops", "cable_m"});
    if (m.contains("hops")) {
      const auto hops = r.u64(m["hops"], "$.measurement.hops");
      if (hops > static_cast<std::uint64_t>(kMaxProfileHops))
        r.fail("$.measurement.hops",
               "must be 0.." + std::to_string(kMaxProfileHops) + " (switches on the path)");
      p.hops = static_cast<int>(hops);
    }
    if (m.contains("cable_m")) p.cable_m = r.nonneg(m["cable_m"], "$.measurement.cable_m");
    if ((p.hops + 1) * p.cable_m > kMaxPathCableM)
      r.fail("$.measurement.cable_m", "(hops + 1) x cable_m = " + std::to_string(p.hops + 1) + " x " +
                                          fmt_g(p.cable_m) + " m, more than the 100,000 m a path may have");
  }
  if (j.contains("latency")) {
    const json& l = j["latency"];
    r.keys(l, "$.latency", {"model", "segments"});
    if (l.contains("model")) (void)r.str(l["model"], "$.latency.model");
    if (l.contains("segments")) {
      const json& segs = r.arr(l["segments"], "$.latency.segments");
      std::uint64_t prev = 0;
      for (std::size_t i = 0; i < segs.size(); ++i) {
        const std::string path = "$.latency.segments[" + std::to_string(i) + "]";
        r.keys(segs[i], path, {"lo_bytes", "hi_bytes", "a", "b", "note"});
        LatencySegment s;
        s.lo_bytes = r.u64(r.need(segs[i], path, "lo_bytes"), path + ".lo_bytes");
        s.hi_bytes = r.u64(r.need(segs[i], path, "hi_bytes"), path + ".hi_bytes");
        if (s.hi_bytes < s.lo_bytes) r.fail(path + ".hi_bytes", "below lo_bytes");
        if (i > 0 && s.lo_bytes <= prev)
          r.fail(path + ".lo_bytes", "segments must be in increasing size order");
        prev = s.hi_bytes;
        s.a = r.param(r.need(segs[i], path, "a"), path + ".a", "ns");
        s.b = r.param(r.need(segs[i], path, "b"), path + ".b", "ns/B");
        if (segs[i].contains("note")) s.note = r.str(segs[i]["note"], path + ".note");
        p.latency.push_back(std::move(s));
      }
    }
  }
  if (j.contains("bandwidth")) {
    const json& b = j["bandwidth"];
    r.keys(b, "$.bandwidth", {"model", "o", "B", "p", "B_bounded_by_link"});
    if (b.contains("model")) (void)r.str(b["model"], "$.bandwidth.model");
    if (b.contains("o")) p.bw_overhead = r.param(b["o"], "$.bandwidth.o", "ns");
    if (b.contains("B")) {
      p.bw_rate = r.param(b["B"], "$.bandwidth.B", "Gb/s");
      if (!(p.bw_rate->value > 0)) r.fail("$.bandwidth.B.value", "must be positive");
    }
    if (b.contains("p")) {
      p.bw_overlap = r.param(b["p"], "$.bandwidth.p", "");
      if (!(p.bw_overlap->value >= 1.0 && p.bw_overlap->value <= 64.0))
        r.fail("$.bandwidth.p.value", "must be between 1 (additive) and 64");
    }
    if (b.contains("B_bounded_by_link")) {
      if (!b["B_bounded_by_link"].is_boolean())
        r.fail("$.bandwidth.B_bounded_by_link", "expected true or false");
      p.bw_rate_bounded = b["B_bounded_by_link"].get<bool>();
    }
  }
  if (j.contains("switch")) {
    const json& s = j["switch"];
    r.keys(s, "$.switch", {"latency"});
    if (s.contains("latency")) p.switch_latency_fit = r.param(s["latency"], "$.switch.latency", "ns");
  }
  if (j.contains("noise")) {
    const json& n = j["noise"];
    r.keys(n, "$.noise", {"model", "segments"});
    if (n.contains("model")) (void)r.str(n["model"], "$.noise.model");
    if (n.contains("segments")) {
      const json& segs = r.arr(n["segments"], "$.noise.segments");
      for (std::size_t i = 0; i < segs.size(); ++i) {
        const std::string path = "$.noise.segments[" + std::to_string(i) + "]";
        r.keys(segs[i], path, {"lo_bytes", "hi_bytes", "points", "sample_median_ns", "quantiles"});
        NoiseSegment s;
        s.lo_bytes = r.u64(r.need(segs[i], path, "lo_bytes"), path + ".lo_bytes");
        s.hi_bytes = r.u64(r.need(segs[i], path, "hi_bytes"), path + ".hi_bytes");
        if (segs[i].contains("points")) s.points = r.u64(segs[i]["points"], path + ".points");
        if (segs[i].contains("sample_median_ns"))
          s.sample_median_ns = r.nonneg(segs[i]["sample_median_ns"], path + ".sample_median_ns");
        const json& q = r.arr(r.need(segs[i], path, "quantiles"), path + ".quantiles");
        for (std::size_t k = 0; k < q.size(); ++k) {
          const std::string qp = path + ".quantiles[" + std::to_string(k) + "]";
          r.keys(q[k], qp, {"p", "extra_ns"});
          const double pr = r.num(r.need(q[k], qp, "p"), qp + ".p");
          const double x = r.nonneg(r.need(q[k], qp, "extra_ns"), qp + ".extra_ns");
          if (pr < 0 || pr > 1) r.fail(qp + ".p", "must be in [0, 1]");
          if (!s.knots.empty() && pr <= s.knots.back().first) r.fail(qp + ".p", "must increase");
          if (!s.knots.empty() && x < s.knots.back().second) r.fail(qp + ".extra_ns", "must not decrease");
          s.knots.emplace_back(pr, x);
        }
        if (s.knots.size() < 2 || s.knots.front().first != 0.0 || s.knots.back().first != 1.0)
          r.fail(path + ".quantiles", "needs at least two knots, the first at p = 0 and the last at p = 1");
        p.noise.segments.push_back(std::move(s));
      }
    }
  }
  if (j.contains("nccl")) {
    const json& n = j["nccl"];
    r.keys(n, "$.nccl",
           {"model", "version", "protocol", "base", "net_step", "base_fixed", "max_bytes", "sources"});
    NcclCostFit f;
    if (n.contains("model")) (void)r.str(n["model"], "$.nccl.model");
    if (n.contains("version")) f.version = r.str(n["version"], "$.nccl.version");
    if (!f.version.empty()) {
      // An NCCL 2.x release ("2.22.3", "2.8"): anything else would reach the cost model's table lookup.
      bool ok = f.version.rfind("2.", 0) == 0;
      std::size_t groups = 0;
      for (std::size_t i = 0; ok && i <= f.version.size(); ++groups) {
        const std::size_t dot = std::min(f.version.find('.', i), f.version.size());
        ok = dot > i && std::all_of(f.version.begin() + static_cast<std::ptrdiff_t>(i),
                                    f.version.begin() + static_cast<std::ptrdiff_t>(dot),
                                    [](unsigned char c) { return std::isdigit(c) != 0; });
        i = dot + 1;
      }
      if (!ok || groups < 2 || groups > 3)
        r.fail("$.nccl.version", "'" + f.version + "' is not an NCCL 2.x release (e.g. \"2.22.3\")");
    }
    f.protocol = r.str(r.need(n, "$.nccl", "protocol"), "$.nccl.protocol");
    if (f.protocol != "ll" && f.protocol != "ll128" && f.protocol != "simple")
      r.fail("$.nccl.protocol", "expected \"ll\", \"ll128\" or \"simple\"");
    f.base = r.param(r.need(n, "$.nccl", "base"), "$.nccl.base", "us");
    f.net_step = r.param(r.need(n, "$.nccl", "net_step"), "$.nccl.net_step", "us");
    if (f.base.value < 0) r.fail("$.nccl.base.value", "must not be negative");
    if (f.net_step.value < 0) r.fail("$.nccl.net_step.value", "must not be negative");
    if (n.contains("base_fixed")) {
      if (!n["base_fixed"].is_boolean()) r.fail("$.nccl.base_fixed", "expected true or false");
      f.base_fixed = n["base_fixed"].get<bool>();
    }
    if (n.contains("max_bytes")) f.max_bytes = r.u64(n["max_bytes"], "$.nccl.max_bytes");
    if (n.contains("sources")) {
      const json& srcs = r.arr(n["sources"], "$.nccl.sources");
      for (std::size_t k = 0; k < srcs.size(); ++k)
        f.sources.push_back(r.str(srcs[k], "$.nccl.sources[" + std::to_string(k) + "]"));
    }
    p.nccl = std::move(f);
  }
  const json& e = r.need(j, "$", "engine");
  r.keys(e, "$.engine",
         {"nic_tx_latency_ns", "nic_rx_latency_ns", "switch_latency_ns", "switch_latency_source",
          "hca_rate_gbps", "message_gap_ns"});
  auto t_ns = [&](const char* key) {
    return Time::ps(std::llround(r.nonneg(r.need(e, "$.engine", key), std::string("$.engine.") + key) * 1e3));
  };
  p.nic_tx_latency = t_ns("nic_tx_latency_ns");
  p.nic_rx_latency = t_ns("nic_rx_latency_ns");
  p.switch_latency = t_ns("switch_latency_ns");
  if (e.contains("message_gap_ns")) p.message_gap = t_ns("message_gap_ns");
  if (e.contains("switch_latency_source"))
    p.switch_latency_source = r.str(e["switch_latency_source"], "$.engine.switch_latency_source");
  if (e.contains("hca_rate_gbps")) p.hca_rate_gbps = r.nonneg(e["hca_rate_gbps"], "$.engine.hca_rate_gbps");
  if (j.contains("host")) {
    const json& h = j["host"];
    if (!h.is_object()) r.fail("$.host", "expected an object of host-path knobs");
    const auto& names = pkt::host_knob_names();
    for (const auto& [key, value] : h.items()) {
      if (std::find(names.begin(), names.end(), key) == names.end()) {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        r.fail("$.host." + key, "unknown host-path knob (known: " + known + ")");
      }
      try {
        pkt::check_knob_value(*pkt::find_packet_knob(key), value, "$.host." + key);
      } catch (const InputError& err) {
        throw InputError(source + ": " + err.what());
      }
    }
    pkt::PacketConfig check; // the rules between knobs (pcie_gen and pcie_lanes values)
    try {
      check.apply_json(h, "$.host");
    } catch (const InputError& err) {
      throw InputError(source + ": " + err.what());
    }
    p.host = h;
  }
  if (j.contains("variability"))
    p.variability = VariabilityModel::from_json(j["variability"], source, "$.variability");
  if (j.contains("warnings")) {
    const json& w = r.arr(j["warnings"], "$.warnings");
    for (std::size_t k = 0; k < w.size(); ++k)
      p.warnings.push_back(r.str(w[k], "$.warnings[" + std::to_string(k) + "]"));
  }
  return p;
}

Profile Profile::load(const std::string& path) {
  refuse_folder(path, "a calibration profile");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the profile");
  std::ostringstream text;
  text << in.rdbuf();
  return from_json(parse_json_text(text.str(), path), path);
}

void Profile::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path + ": cannot open for writing");
  out << to_json().dump(2) << "\n";
  if (!out) throw InputError(path + ": write failed");
}

void apply(const Profile& p, pkt::PacketConfig& cfg) {
  cfg.nic_tx_latency = p.nic_tx_latency;
  cfg.nic_rx_latency = p.nic_rx_latency;
  cfg.switch_latency = p.switch_latency;
  // A measured (or explicitly given) switch latency is the one of the switch the profile was measured
  // through: it replaces the catalog's per-model values; an assumed generation default does not.
  cfg.switch_latency_from_model =
      p.switch_latency_source != "fitted" && p.switch_latency_source != "assumed (--switch-latency-ns)";
  cfg.mtu_bytes = p.mtu_bytes;
  cfg.link_layer = p.link_layer;
  cfg.header_bytes = p.header_bytes;
  cfg.hca_rate_gbps = p.hca_rate_gbps;
  for (const auto& [key, value] : p.host.items())
    pkt::find_packet_knob(key)->set(cfg, value, "$.host." + key);
}

std::string fnv1a64_hex(const std::string& bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(fnv1a64(bytes)));
  return buf;
}

nlohmann::json input_hashes(const std::vector<std::string>& files) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : files) {
    const auto content = read_file(f);
    out.push_back({{"file", f}, {"hash", fnv1a64_hex(content)}, {"bytes", content.size()}});
  }
  return out;
}

} // namespace ibn::calib
