#include "scenarios/cc_experiments.hpp"

#include "models/packet/network.hpp"
#include "models/routing/routing.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/markup.hpp"
#include "sim/simulation.hpp"
#include "sim/units.hpp"
#include "topology/fabric.hpp"
#include "topology/link_speed.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace ibn::scen {

namespace {

/// "FILE: key $.a.b" (the style of the project's JSON errors).
std::string at(const std::string& where, const std::string& key) {
  return where + ": key $." + key;
}

double number(const nlohmann::json& v, const std::string& path, double lo, double hi) {
  if (!v.is_number()) throw InputError(path + ": expected a number");
  const double d = v.get<double>();
  if (!(d >= lo && d <= hi)) throw InputError(path + ": must be in [" + fmt_g(lo) + ", " + fmt_g(hi) + "]");
  return d;
}
double whole(const nlohmann::json& v, const std::string& path, double lo, double hi) {
  const double d = number(v, path, lo, hi);
  if (d != std::floor(d)) throw InputError(path + ": expected a whole number, not " + v.dump());
  return d;
}
std::uint64_t size(const nlohmann::json& v, const std::string& path) {
  if (v.is_string()) {
    const std::uint64_t b = parse_size_bytes(v.get<std::string>(), path);
    if (b == 0) throw InputError(path + ": must be at least 1 byte");
    return b;
  }
  return static_cast<std::uint64_t>(whole(v, path, 1, 1e13));
}

topo::NodeId add_node(topo::Fabric& f, topo::NodeKind kind, const std::string& name, int radix, int tier,
                      int host) {
  topo::Node n;
  n.kind = kind;
  n.name = name;
  n.radix = radix;
  n.tier = tier;
  n.host = host;
  return f.add_node(n);
}

/// Times in the CSVs: fixed decimals to the picosecond (the engine's resolution), so close events never
/// print the same.
std::string fmt_t(double us) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6f", us);
  return b;
}

/// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string o = "\"";
  for (char c : v) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

/// Payload bytes accepted by the receivers (all traffic goes to the one receiver), read at every bin
/// boundary: what the bottleneck delivered per bin, exactly. A Background component: it does not keep the run
/// alive.
class BinSampler final : public Component {
 public:
  BinSampler(Simulation& sim, const pkt::PacketNetwork& net, Time bin)
      : Component(sim, "experiment.bins", HandlerKind::Background), net_(net), bin_(bin) {
    schedule_at(bin_);
  }
  void on_event(EventTag) override {
    cum_.push_back(static_cast<double>(net_.stats().payload_bytes_delivered));
    schedule_in(bin_);
  }
  /// Bytes delivered in bin k (of `bins`), the last ones up to the end of the run.
  std::vector<double> per_bin(std::size_t bins) const {
    std::vector<double> v(bins, 0);
    double prev = 0;
    const auto total = static_cast<double>(net_.stats().payload_bytes_delivered);
    for (std::size_t k = 0; k < bins; ++k) {
      const double c = k < cum_.size() ? cum_[k] : total;
      v[k] = c - prev;
      prev = c;
    }
    return v;
  }

 private:
  const pkt::PacketNetwork& net_;
  Time bin_;
  std::vector<double> cum_; ///< at bin_, 2 bin_, ...
};

/// Validates `packet` as PacketConfig settings; the message names `path`. Returns the error or "".
std::string packet_error(const nlohmann::json& packet, const std::string& path) {
  try {
    pkt::PacketConfig probe;
    probe.apply_json(packet, path);
  } catch (const InputError& err) {
    return err.what();
  }
  return {};
}

} // namespace

std::string fmt_g(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

double CcExperiment::start_of(int sender) const {
  if (start_us.empty()) return 0.0;
  return start_us.size() == 1 ? start_us[0] : start_us[static_cast<std::size_t>(sender)];
}

CcExperiment CcExperiment::from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object");
  CcExperiment e;
  nlohmann::json packet = nlohmann::json::object();
  nlohmann::json variants;
  bool message_given = false;
  for (const auto& [key, v] : j.items()) {
    const std::string path = at(where, key);
    if (key == "name")
      e.name = v.is_string() ? v.get<std::string>() : throw InputError(path + ": expected a string");
    else if (key == "description")
      e.description = v.is_string() ? v.get<std::string>() : throw InputError(path + ": expected a string");
    else if (key == "senders")
      e.senders = static_cast<int>(whole(v, path, 1, 63));
    else if (key == "link") {
      if (!v.is_string()) throw InputError(path + ": expected a link speed such as \"NDR\" or \"4xEDR\"");
      e.link = v.get<std::string>();
      (void)topo::parse_link_speed(e.link, path);
    } else if (key == "cable_m")
      e.cable_m = number(v, path, 0, 1e4);
    else if (key == "start_us") {
      if (!v.is_array() || v.empty())
        throw InputError(path + ": expected an array of start times in us: one for every sender, or one per "
                                "sender (leave the key out for all at 0)");
      for (std::size_t i = 0; i < v.size(); ++i)
        e.start_us.push_back(number(v[i], path + "[" + std::to_string(i) + "]", 0, 1e9));
    } else if (key == "bytes_per_sender")
      e.bytes_per_sender = size(v, path);
    else if (key == "message_bytes") {
      e.message_bytes = size(v, path);
      message_given = true;
    } else if (key == "sample_us")
      e.sample_us = number(v, path, 1e-3, 1e6);
    else if (key == "bin_us")
      e.bin_us = number(v, path, 1e-3, 1e6);
    else if (key == "packet") {
      if (!v.is_object()) throw InputError(path + ": expected an object of packet-engine settings");
      packet = v;
    } else if (key == "variants") {
      if (!v.is_array() || v.empty())
        throw InputError(path + ": expected a non-empty array of {label, packet}");
      variants = v;
    } else
      throw InputError(path + ": unknown key");
  }
  if (e.message_bytes > e.bytes_per_sender) {
    const std::string m = std::to_string(e.message_bytes), b = std::to_string(e.bytes_per_sender);
    if (message_given)
      throw InputError(at(where, "message_bytes") + ": " + m + " bytes, larger than bytes_per_sender (" + b +
                       ")");
    throw InputError(at(where, "bytes_per_sender") + ": " + b + " bytes, smaller than one message (" +
                     "message_bytes, default " + m + ")");
  }
  // One start time for every sender, or one per sender: a shorter list used to repeat its last value for
  // the senders it did not name, and a longer one dropped the extra values, both silently.
  if (e.start_us.size() > 1 && e.start_us.size() != static_cast<std::size_t>(e.senders))
    throw InputError(at(where, "start_us") + ": " + std::to_string(e.start_us.size()) + " start times for " +
                     std::to_string(e.senders) +
                     " senders: give one (every sender starts then) or one per sender");
  const topo::LinkSpeed speed = topo::parse_link_speed(e.link, at(where, "link"));
  // The top-level settings alone first: an error there is blamed on $.packet, not on a variant.
  const std::string base_error = packet_error(packet, at(where, "packet"));
  const bool has_variants = variants.is_array();
  if (!has_variants) {
    if (!base_error.empty()) throw InputError(base_error);
    variants = nlohmann::json::array({nlohmann::json{{"label", e.name}}});
  }
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const auto& v = variants[i];
    const std::string vkey = "variants[" + std::to_string(i) + "]";
    if (!v.is_object()) throw InputError(at(where, vkey) + ": expected {label, packet}");
    CcVariant cv;
    cv.packet = packet;
    nlohmann::json patch = nlohmann::json::object();
    for (const auto& [key, x] : v.items()) {
      if (key == "label")
        cv.label = x.is_string() ? x.get<std::string>()
                                 : throw InputError(at(where, vkey + ".label") + ": expected a string");
      else if (key == "packet") {
        if (!x.is_object()) throw InputError(at(where, vkey + ".packet") + ": expected an object");
        patch = x;
        cv.packet.merge_patch(x);
      } else
        throw InputError(at(where, vkey + "." + key) + ": unknown key");
    }
    if (cv.label.empty()) cv.label = has_variants ? "variant " + std::to_string(i) : "experiment";
    for (const auto& other : e.variants)
      if (other.label == cv.label)
        throw InputError(at(where, vkey + ".label") + ": '" + cv.label +
                         "' is the label of an earlier variant; labels name the rows of the CSVs, give each "
                         "variant its own");
    // Checked now, before anything runs; an error the top-level settings have on their own is theirs.
    const std::string kpath = has_variants ? vkey + ".packet" : "packet";
    const std::string err = packet_error(cv.packet, at(where, kpath));
    if (!err.empty()) throw InputError(base_error.empty() ? err : base_error);
    pkt::PacketConfig cfg;
    cfg.apply_json(cv.packet, at(where, kpath));
    // Where the user wrote a key: the variant's patch, else the top-level settings.
    auto written = [&](const char* sect, const char* key) {
      if (patch.contains(sect) && patch[sect].is_object() && (!key || patch[sect].contains(key)))
        return vkey + ".packet." + sect + (key ? std::string(".") + key : "");
      return std::string("packet.") + sect + (key ? std::string(".") + key : "");
    };
    const double line_mbps = speed.rate_gbps() * 1e3;
    if (cfg.cc == pkt::CcMode::Dcqcn && cfg.dcqcn.min_rate_mbps > line_mbps)
      throw InputError(at(where, written("dcqcn", "min_rate_mbps")) + ": " + fmt_g(cfg.dcqcn.min_rate_mbps) +
                       " Mb/s is above the line rate of " + e.link + " (" + fmt_g(line_mbps) +
                       " Mb/s): the rate could never be cut");
    for (const auto& [sect, mode] :
         {std::pair{"dcqcn", pkt::CcMode::Dcqcn}, std::pair{"ibcc", pkt::CcMode::IbCc}})
      if (cv.packet.contains(sect) && cfg.cc != mode)
        e.warnings.push_back(at(where, written(sect, nullptr)) + ": ignored: " + cv.label +
                             " runs with cc \"" + cv.packet.value("cc", std::string("none")) + "\", not \"" +
                             sect + "\"");
    e.variants.push_back(std::move(cv));
  }
  e.check_size(where);
  return e;
}

CcSize CcExperiment::estimate() const {
  CcSize z;
  const double rate_bps = static_cast<double>(topo::parse_link_speed(link, "link").rate_bps());
  double last_start = 0;
  for (int s = 0; s < senders; ++s) last_start = std::max(last_start, start_of(s));
  z.last_start_us = last_start;
  // Every byte crosses the receiver's one link: the run lasts at least this long (CC can stretch it).
  z.sim_us =
      last_start + static_cast<double>(senders) * static_cast<double>(bytes_per_sender) * 8 / rate_bps * 1e6;
  const double nv = static_cast<double>(std::max<std::size_t>(1, variants.size()));
  z.queue_rows = nv * (z.sim_us / sample_us + 1);
  z.throughput_rows = nv * senders * (z.sim_us / bin_us + 1);
  // The engine samples every output port: senders + 1 switch ports and as many HCA ports.
  z.trace_points = (z.sim_us / sample_us + 1) * 2 * (senders + 1);
  z.messages =
      nv * senders * std::ceil(static_cast<double>(bytes_per_sender) / static_cast<double>(message_bytes));
  return z;
}

void CcExperiment::check_size(const std::string& where) const {
  const CcSize z = estimate();
  // The key to blame: a late start_us when it makes most of the run, else the sampling period.
  const bool late = z.last_start_us > z.sim_us - z.last_start_us;
  const std::string span = " (the run lasts at least " + fmt_g(z.sim_us) + " us: the last start, " +
                           fmt_g(z.last_start_us) + " us, plus every sender's bytes at the line rate)";
  if (z.queue_rows > kMaxRows || z.trace_points > kMaxTracePoints)
    throw InputError(at(where, late ? "start_us" : "sample_us") + ": sample_us " + fmt_g(sample_us) +
                     " gives about " + fmt_g(z.queue_rows) + " queue.csv rows and " + fmt_g(z.trace_points) +
                     " port samples held" + span + ", above the bounds of " + fmt_g(kMaxRows) +
                     " rows per file and " + fmt_g(kMaxTracePoints) +
                     " samples; raise sample_us, or lower start_us or bytes_per_sender");
  if (z.throughput_rows > kMaxRows)
    throw InputError(at(where, late ? "start_us" : "bin_us") + ": bin_us " + fmt_g(bin_us) + " gives about " +
                     fmt_g(z.throughput_rows) + " throughput.csv rows" + span + ", above the bound of " +
                     fmt_g(kMaxRows) + " rows per file; raise bin_us, or lower start_us or bytes_per_sender");
  if (z.messages > kMaxRows)
    throw InputError(at(where, "bytes_per_sender") + ": about " + fmt_g(z.messages) +
                     " messages over all variants, above the bound of " + fmt_g(kMaxRows) +
                     "; raise message_bytes or lower bytes_per_sender");
}

nlohmann::json CcRunResult::summary() const {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"label", label},
          {"jain_second_half", opt(jain_second_half)},
          {"jain_note", jain_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(jain_note)},
          {"mean_queue_bytes", mean_queue_bytes},
          {"max_queue_bytes", max_queue_bytes},
          {"bottleneck_gbps", opt(bottleneck_gbps)},
          {"ecn_marks", ecn_marks},
          {"fecn_marks", fecn_marks},
          {"cnps", cnps},
          {"rate_cuts", rate_cuts},
          {"pause_frames", pause_frames},
          {"end_us", end_us}};
}

std::vector<CcRunResult> run_cc_experiment(const CcExperiment& e) {
  // Star: senders h0..h{n-1} and the receiver h{n} on one switch.
  const int n = e.senders;
  const auto N = static_cast<std::size_t>(n);
  topo::Fabric f;
  const topo::LinkSpeed speed = topo::parse_link_speed(e.link, "link");
  const auto sw = add_node(f, topo::NodeKind::Switch, "sw", std::max(n + 1, 2), 1, -1);
  for (int i = 0; i <= n; ++i) {
    const auto h = add_node(f, topo::NodeKind::Hca, "h" + std::to_string(i), 1, 0, i);
    f.add_link(topo::make_link({h, 1}, {sw, i + 1}, speed, e.cable_m, topo::Medium::Dac));
  }
  const auto tables = routing::builtin_routing().get("minhop").factory(f, {});
  std::vector<pkt::HcaIndex> hca(N + 1);
  for (pkt::HcaIndex i = 0; i < tables.num_hcas(); ++i)
    hca[std::stoul(f.node(tables.hca_nodes()[i]).name.substr(1))] = i;
  std::vector<int> sender_of(N + 1, -1); // HCA index -> sender
  for (int s = 0; s < n; ++s) sender_of[hca[static_cast<std::size_t>(s)]] = s;

  std::vector<CcRunResult> out;
  for (const auto& v : e.variants) {
    pkt::PacketConfig cfg;
    cfg.apply_json(v.packet, "packet");
    cfg.trace_rates = true;
    cfg.trace_interval_ns = e.sample_us * 1e3;
    Simulation sim{1};
    pkt::PacketNetwork net(sim, f, tables, cfg);
    BinSampler sampler(sim, net, Time::from_us(e.bin_us));
    const std::uint64_t msgs = (e.bytes_per_sender + e.message_bytes - 1) / e.message_bytes;
    // The run ends when the last message is acknowledged (before 2026-12-07 an RC retransmission timer still
    // armed for an acknowledged message, packet.ack_timeout_us = 4.3 s, kept the clock and the samplers
    // running).
    const std::uint64_t total = msgs * static_cast<std::uint64_t>(n);
    std::uint64_t acked = 0;
    Time last_ack = Time::zero();
    net.on_acked([&](const pkt::MessageRecord& m) {
      last_ack = std::max(last_ack, m.acked);
      if (++acked == total) sim.request_stop();
    });
    for (int s = 0; s < n; ++s)
      for (std::uint64_t k = 0; k < msgs; ++k) {
        // The last message carries what is left (bytes_per_sender need not be a multiple).
        const std::uint64_t b = std::min(e.message_bytes, e.bytes_per_sender - k * e.message_bytes);
        net.post_at(Time::from_us(e.start_of(s)),
                    {.src = hca[static_cast<std::size_t>(s)], .dst = hca[N], .bytes = b});
      }
    // The bounds hold during the run too: the estimate is a lower bound (CC can stretch a run), so a run
    // still going where its rows would pass them stops with exit 2 instead of filling the memory.
    const double limit_us = std::min(
        {kMaxRows * e.sample_us, kMaxTracePoints * e.sample_us / (2.0 * (n + 1)), kMaxRows * e.bin_us / n});
    const auto st_run = sim.run({.end_time = Time::from_us(limit_us)});
    if (st_run.reason == StopReason::EndTime && acked < total)
      throw InputError(
          v.label + ": still running at " + fmt_g(limit_us) + " us with " + std::to_string(total - acked) +
          " of " + std::to_string(total) + " messages unacknowledged: its rows would pass the bounds of " +
          fmt_g(kMaxRows) + " rows per file and " + fmt_g(kMaxTracePoints) +
          " samples held (docs/cli.md, experiment); raise sample_us and bin_us, or send fewer bytes");
    CcRunResult r;
    r.label = v.label;
    r.end_us = (acked == total ? last_ack : sim.now()).to_us();
    // Rates (the first point of each QP is its line rate at creation).
    r.rate_gbps.resize(N);
    for (const auto& tr : net.rate_traces())
      if (tr.src < sender_of.size() && sender_of[tr.src] >= 0)
        for (const auto& p : tr.rate_gbps)
          if (p.t.to_us() <= r.end_us)
            r.rate_gbps[static_cast<std::size_t>(sender_of[tr.src])].push_back({p.t.to_us(), p.value});
    // Delivered throughput per bin. The bottleneck's total per bin is exact (BinSampler); it is split among
    // the senders in proportion to an estimate: a sender's messages arrive one after the other (one QP, in
    // order), so the packets of one arrive between the previous one's last packet (or its own first packet)
    // and its own last packet, and its bytes are spread evenly over that interval. (Counting whole 64 KiB
    // messages in the bin of their end showed more than the line rate.)
    const double bin = e.bin_us;
    const auto bins = static_cast<std::size_t>(std::ceil(r.end_us / bin)) + 1;
    std::vector<std::vector<double>> bytes(N, std::vector<double>(bins, 0));
    std::vector<double> done(N, 0), prev(N, -1);
    const double rx_us = cfg.nic_rx_latency.to_us(); // delivered = last packet in + nic_rx
    for (std::size_t i = 0; i < net.num_messages(); ++i) {
      const auto& m = net.message(static_cast<pkt::MessageId>(i));
      if (!m.is_delivered || m.spec.src >= sender_of.size() || sender_of[m.spec.src] < 0) continue;
      const auto s = static_cast<std::size_t>(sender_of[m.spec.src]);
      done[s] = std::max(done[s], m.delivered.to_us());
      const double t1 = std::max(m.first_tx.to_us(), m.delivered.to_us() - rx_us);
      const double t0 = std::min(t1, std::max(prev[s], m.first_tx.to_us()));
      prev[s] = std::max(prev[s], t1);
      const auto b = static_cast<double>(m.spec.bytes);
      if (t1 <= t0) {
        bytes[s][std::min(bins - 1, static_cast<std::size_t>(t1 / bin))] += b;
        continue;
      }
      for (auto k = static_cast<std::size_t>(t0 / bin); k < bins && static_cast<double>(k) * bin < t1; ++k) {
        const double lo = std::max(t0, static_cast<double>(k) * bin);
        const double hi = std::min(t1, static_cast<double>(k + 1) * bin);
        if (hi > lo) bytes[s][k] += b * (hi - lo) / (t1 - t0);
      }
    }
    const auto exact = sampler.per_bin(bins);
    for (std::size_t k = 0; k < bins; ++k) {
      double est = 0;
      for (std::size_t s = 0; s < N; ++s) est += bytes[s][k];
      if (est > 0)
        for (std::size_t s = 0; s < N; ++s) bytes[s][k] *= exact[k] / est;
    }
    r.throughput_gbps.resize(N);
    for (std::size_t s = 0; s < N; ++s)
      for (std::size_t b = 0; b < bins; ++b)
        r.throughput_gbps[s].push_back({(static_cast<double>(b) + 0.5) * bin, bytes[s][b] * 8 / (bin * 1e3)});
    // The competition window: last start .. first completion; its second half.
    double last_start = 0;
    for (int s = 0; s < n; ++s) last_start = std::max(last_start, e.start_of(s));
    const double first_done = *std::min_element(done.begin(), done.end());
    const bool window = first_done > last_start;
    const double mid = last_start + (first_done - last_start) / 2;
    std::vector<double> share(N, 0);
    for (std::size_t i = 0; i < net.num_messages() && window; ++i) {
      const auto& m = net.message(static_cast<pkt::MessageId>(i));
      const double t = m.delivered.to_us();
      if (!m.is_delivered || t < mid || t >= first_done || m.spec.src >= sender_of.size() ||
          sender_of[m.spec.src] < 0)
        continue;
      share[static_cast<std::size_t>(sender_of[m.spec.src])] += static_cast<double>(m.spec.bytes);
    }
    const double sum = std::accumulate(share.begin(), share.end(), 0.0);
    double sum2 = 0;
    for (double x : share) sum2 += x * x;
    if (window && sum2 > 0) {
      r.jain_second_half = sum * sum / (n * sum2);
      r.bottleneck_gbps = sum * 8 / ((first_done - mid) * 1e3);
    } else {
      r.jain_note = window
                        ? "no message delivered in the second half of the interval with every sender active "
                          "(fewer, larger messages than that half holds: lower message_bytes)"
                        : "no interval with every sender active";
    }
    // The bottleneck: the switch's port toward the receiver.
    for (const auto& tr : net.queue_traces())
      if (tr.node == sw && tr.port == n + 1) {
        double qs = 0;
        int cnt = 0;
        for (const auto& p : tr.queue_bytes) {
          const double t = p.t.to_us();
          if (t > r.end_us) break;
          r.queue_bytes.push_back({t, p.value});
          if (!r.jain_second_half || (t >= mid && t < first_done)) {
            qs += p.value;
            ++cnt;
            r.max_queue_bytes = std::max(r.max_queue_bytes, p.value);
          }
        }
        r.mean_queue_bytes = cnt ? qs / cnt : 0;
      }
    const auto& st = net.stats();
    r.ecn_marks = st.ecn_marks;
    r.fecn_marks = st.fecn_marks;
    r.cnps = st.cnps_received;
    r.rate_cuts = st.rate_cuts;
    r.pause_frames = st.pause_frames;
    out.push_back(std::move(r));
  }
  return out;
}

std::string svg_chart(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                      const std::vector<std::pair<std::string, std::vector<CcSeriesPoint>>>& series) {
  const double W = 720, H = 360, L = 70, R = 160, T = 30, B = 45;
  double x0 = 0, x1 = 1, y1 = 0;
  bool any = false;
  for (const auto& [name, pts] : series)
    for (const auto& p : pts) {
      if (!std::isfinite(p.t_us) || !std::isfinite(p.value)) continue;
      x0 = any ? std::min(x0, p.t_us) : p.t_us;
      x1 = any ? std::max(x1, p.t_us) : p.t_us;
      y1 = std::max(y1, p.value);
      any = true;
    }
  if (!any) x0 = 0, x1 = 1;
  if (x0 >= x1) x1 = x0 + 1;
  if (y1 <= 0) y1 = 1;
  y1 *= 1.05;
  auto X = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  auto Y = [&](double y) { return H - B - y / y1 * (H - T - B); };
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                 "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
       "fill=\"white\"/>\n";
  s << "<text x=\"" << W / 2 << "\" y=\"18\" text-anchor=\"middle\" font-size=\"13\">" << markup_escape(title)
    << "</text>\n";
  s << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - R << "\" y2=\"" << H - B
    << "\" stroke=\"black\"/>\n";
  s << "<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\"" << H - B
    << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double xv = x0 + (x1 - x0) * i / 5, yv = y1 * i / 5;
    s << "<text x=\"" << X(xv) << "\" y=\"" << H - B + 15 << "\" text-anchor=\"middle\">" << fmt_g(xv)
      << "</text>\n";
    s << "<text x=\"" << L - 5 << "\" y=\"" << Y(yv) + 4 << "\" text-anchor=\"end\">" << fmt_g(yv)
      << "</text>\n";
    s << "<line x1=\"" << L << "\" y1=\"" << Y(yv) << "\" x2=\"" << W - R << "\" y2=\"" << Y(yv)
      << "\" stroke=\"#ddd\"/>\n";
  }
  s << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 8 << "\" text-anchor=\"middle\">"
    << markup_escape(xlabel) << "</text>\n";
  s << "<text x=\"14\" y=\"" << (T + H - B) / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
    << (T + H - B) / 2 << ")\">" << markup_escape(ylabel) << "</text>\n";
  if (!any)
    s << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << (T + H - B) / 2
      << "\" text-anchor=\"middle\" fill=\"#888\" font-size=\"14\">no data</text>\n";
  for (std::size_t k = 0; k < series.size() && any; ++k) {
    const auto& [name, pts] = series[k];
    const char* c = colors[k % 8];
    if (!pts.empty()) {
      s << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"1.2\" points=\"";
      // At most ~2000 points per series: thin evenly (the CSV keeps them all).
      const std::size_t step = std::max<std::size_t>(1, pts.size() / 2000);
      for (std::size_t i = 0; i < pts.size(); i += step)
        s << fmt_g(X(pts[i].t_us)) << "," << fmt_g(Y(pts[i].value)) << " ";
      s << fmt_g(X(pts.back().t_us)) << "," << fmt_g(Y(pts.back().value));
      s << "\"/>\n";
    }
    s << "<line x1=\"" << W - R + 10 << "\" y1=\"" << T + 10 + 16 * k << "\" x2=\"" << W - R + 30
      << "\" y2=\"" << T + 10 + 16 * k << "\" stroke=\"" << c << "\" stroke-width=\"2\"/>\n";
    s << "<text x=\"" << W - R + 34 << "\" y=\"" << T + 14 + 16 * k << "\">" << markup_escape(name)
      << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

void write_cc_results(const CcExperiment& e, const std::vector<CcRunResult>& runs, const std::string& dir) {
  // Every file through the atomic writer: a reader never sees half a file, a failed run keeps the old one.
  auto put = [&](const std::string& name, const std::string& text) {
    write_file_atomic(dir + "/" + name, text);
  };
  {
    std::ostringstream o;
    o << "variant,sender,t_us,rate_gbps\n";
    for (const auto& r : runs)
      for (std::size_t s = 0; s < r.rate_gbps.size(); ++s)
        for (const auto& p : r.rate_gbps[s])
          o << csv_field(r.label) << "," << s << "," << fmt_t(p.t_us) << "," << fmt_g(p.value) << "\n";
    put("rates.csv", o.str());
  }
  {
    std::ostringstream o;
    o << "variant,sender,t_us,gbps\n";
    for (const auto& r : runs)
      for (std::size_t s = 0; s < r.throughput_gbps.size(); ++s)
        for (const auto& p : r.throughput_gbps[s])
          o << csv_field(r.label) << "," << s << "," << fmt_t(p.t_us) << "," << fmt_g(p.value) << "\n";
    put("throughput.csv", o.str());
  }
  {
    std::ostringstream o;
    o << "variant,t_us,queue_bytes\n";
    for (const auto& r : runs)
      for (const auto& p : r.queue_bytes)
        o << csv_field(r.label) << "," << fmt_t(p.t_us) << "," << fmt_g(p.value) << "\n";
    put("queue.csv", o.str());
  }
  nlohmann::json sum = {{"name", e.name}, {"description", e.description}, {"runs", nlohmann::json::array()}};
  if (!e.warnings.empty()) sum["warnings"] = e.warnings;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto js = runs[i].summary();
    js["packet"] = e.variants[i].packet;
    sum["runs"].push_back(js);
  }
  put("summary.json", sum.dump(2) + "\n");
  // Charts: one variant -> one line per sender; several variants -> sender 0 of each (rates), queue of each.
  std::vector<std::pair<std::string, std::vector<CcSeriesPoint>>> rates, tput, queue;
  for (const auto& r : runs) {
    const std::string pre = runs.size() > 1 ? r.label + " " : "";
    const std::size_t ns =
        runs.size() > 1 ? std::min<std::size_t>(1, r.rate_gbps.size()) : r.rate_gbps.size();
    for (std::size_t s = 0; s < ns; ++s) {
      auto pts = r.rate_gbps[s];
      if (!pts.empty()) pts.push_back({r.end_us, pts.back().value}); // a step function held to the end
      rates.push_back({pre + "sender " + std::to_string(s), pts});
      tput.push_back({pre + "sender " + std::to_string(s), r.throughput_gbps[s]});
    }
    queue.push_back({runs.size() > 1 ? r.label : "bottleneck queue", r.queue_bytes});
  }
  const std::string pre = e.name.empty() ? "" : e.name + ": ";
  put("rates.svg", svg_chart(pre + "DCQCN/IB CC rate per sender", "time (us)", "rate (Gb/s)", rates));
  put("throughput.svg", svg_chart(pre + "delivered throughput", "time (us)", "Gb/s", tput));
  put("queue.svg", svg_chart(pre + "bottleneck queue", "time (us)", "bytes", queue));
}

} // namespace ibn::scen
