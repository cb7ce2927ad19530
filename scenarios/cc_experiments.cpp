#include "scenarios/cc_experiments.hpp"

#include "models/packet/network.hpp"
#include "models/routing/routing.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"
#include "topology/fabric.hpp"
#include "topology/link_speed.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

namespace ibn::scen {

namespace {

double number(const nlohmann::json& v, const std::string& path, double lo, double hi) {
  if (!v.is_number()) throw InputError(path + ": expected a number");
  const double d = v.get<double>();
  if (!(d >= lo && d <= hi))
    throw InputError(path + ": must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return d;
}
std::uint64_t size(const nlohmann::json& v, const std::string& path) {
  if (v.is_string()) return parse_size_bytes(v.get<std::string>(), path);
  return static_cast<std::uint64_t>(number(v, path, 1, 1e13));
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

std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

} // namespace

CcExperiment CcExperiment::from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": expected an object");
  CcExperiment e;
  nlohmann::json packet = nlohmann::json::object();
  nlohmann::json variants;
  for (const auto& [key, v] : j.items()) {
    const std::string path = where + "." + key;
    if (key == "name")
      e.name = v.is_string() ? v.get<std::string>() : throw InputError(path + ": expected a string");
    else if (key == "description")
      e.description = v.is_string() ? v.get<std::string>() : throw InputError(path + ": expected a string");
    else if (key == "senders")
      e.senders = static_cast<int>(number(v, path, 1, 63));
    else if (key == "link") {
      if (!v.is_string()) throw InputError(path + ": expected a link speed such as \"NDR\" or \"4xEDR\"");
      e.link = v.get<std::string>();
      (void)topo::parse_link_speed(e.link, path);
    } else if (key == "cable_m")
      e.cable_m = number(v, path, 0, 1e4);
    else if (key == "start_us") {
      if (!v.is_array()) throw InputError(path + ": expected an array of start times in us");
      for (std::size_t i = 0; i < v.size(); ++i)
        e.start_us.push_back(number(v[i], path + "[" + std::to_string(i) + "]", 0, 1e9));
    } else if (key == "bytes_per_sender")
      e.bytes_per_sender = size(v, path);
    else if (key == "message_bytes")
      e.message_bytes = size(v, path);
    else if (key == "sample_us")
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
  if (e.message_bytes > e.bytes_per_sender)
    throw InputError(where + ".message_bytes: larger than bytes_per_sender");
  // One start time for every sender, or one per sender: a shorter list used to repeat its last value for
  // the senders it did not name, and a longer one dropped the extra values, both silently.
  if (e.start_us.size() > 1 && e.start_us.size() != static_cast<std::size_t>(e.senders))
    throw InputError(where + ".start_us: " + std::to_string(e.start_us.size()) + " start times for " +
                     std::to_string(e.senders) +
                     " senders: give one (every sender starts then) or one per sender");
  if (!variants.is_array()) variants = nlohmann::json::array({nlohmann::json{{"label", e.name}}});
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const auto& v = variants[i];
    const std::string path = where + ".variants[" + std::to_string(i) + "]";
    if (!v.is_object()) throw InputError(path + ": expected {label, packet}");
    CcVariant cv;
    cv.packet = packet;
    for (const auto& [key, x] : v.items()) {
      if (key == "label")
        cv.label =
            x.is_string() ? x.get<std::string>() : throw InputError(path + ".label: expected a string");
      else if (key == "packet") {
        if (!x.is_object()) throw InputError(path + ".packet: expected an object");
        cv.packet.merge_patch(x);
      } else
        throw InputError(path + "." + key + ": unknown key");
    }
    if (cv.label.empty()) cv.label = "variant " + std::to_string(i);
    pkt::PacketConfig probe; // checked now, before anything runs
    probe.apply_json(cv.packet, path + ".packet");
    e.variants.push_back(std::move(cv));
  }
  return e;
}

nlohmann::json CcRunResult::summary() const {
  return {{"label", label},
          {"jain_second_half", jain_second_half},
          {"mean_queue_bytes", mean_queue_bytes},
          {"max_queue_bytes", max_queue_bytes},
          {"bottleneck_gbps", bottleneck_gbps},
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
  topo::Fabric f;
  const topo::LinkSpeed speed = topo::parse_link_speed(e.link, "link");
  const auto sw = add_node(f, topo::NodeKind::Switch, "sw", std::max(n + 1, 2), 1, -1);
  for (int i = 0; i <= n; ++i) {
    const auto h = add_node(f, topo::NodeKind::Hca, "h" + std::to_string(i), 1, 0, i);
    f.add_link(topo::make_link({h, 1}, {sw, i + 1}, speed, e.cable_m, topo::Medium::Dac));
  }
  const auto tables = routing::builtin_routing().get("minhop").factory(f, {});
  std::vector<pkt::HcaIndex> hca(static_cast<std::size_t>(n + 1));
  for (pkt::HcaIndex i = 0; i < tables.num_hcas(); ++i)
    hca[std::stoul(f.node(tables.hca_nodes()[i]).name.substr(1))] = i;
  auto start_of = [&](int s) { // from_json: none (0), one for all, or one per sender
    if (e.start_us.empty()) return 0.0;
    return e.start_us.size() == 1 ? e.start_us[0] : e.start_us[static_cast<std::size_t>(s)];
  };

  std::vector<CcRunResult> out;
  for (const auto& v : e.variants) {
    pkt::PacketConfig cfg;
    cfg.apply_json(v.packet, "packet");
    cfg.trace_rates = true;
    cfg.trace_interval_ns = e.sample_us * 1e3;
    Simulation sim{1};
    pkt::PacketNetwork net(sim, f, tables, cfg);
    const std::uint64_t msgs = (e.bytes_per_sender + e.message_bytes - 1) / e.message_bytes;
    for (int s = 0; s < n; ++s)
      for (std::uint64_t k = 0; k < msgs; ++k)
        net.post_at(Time::from_us(start_of(s)), {.src = hca[static_cast<std::size_t>(s)],
                                                 .dst = hca[static_cast<std::size_t>(n)],
                                                 .bytes = e.message_bytes});
    sim.run();
    CcRunResult r;
    r.label = v.label;
    r.end_us = sim.now().to_us();
    // Rates (the first point of each QP is its line rate at creation).
    r.rate_gbps.resize(static_cast<std::size_t>(n));
    for (const auto& tr : net.rate_traces())
      for (int s = 0; s < n; ++s)
        if (tr.src == hca[static_cast<std::size_t>(s)])
          for (const auto& p : tr.rate_gbps)
            r.rate_gbps[static_cast<std::size_t>(s)].push_back({p.t.to_us(), p.value});
    // Delivered throughput per bin; the competition window: last start .. first completion.
    const double bin = e.bin_us;
    const auto bins = static_cast<std::size_t>(std::ceil(r.end_us / bin)) + 1;
    std::vector<std::vector<double>> bytes(static_cast<std::size_t>(n), std::vector<double>(bins, 0));
    std::vector<double> done(static_cast<std::size_t>(n), 0);
    for (std::size_t i = 0; i < net.num_messages(); ++i) {
      const auto& m = net.message(static_cast<pkt::MessageId>(i));
      for (int s = 0; s < n; ++s)
        if (m.spec.src == hca[static_cast<std::size_t>(s)]) {
          bytes[static_cast<std::size_t>(s)][static_cast<std::size_t>(m.delivered.to_us() / bin)] +=
              static_cast<double>(m.spec.bytes);
          done[static_cast<std::size_t>(s)] =
              std::max(done[static_cast<std::size_t>(s)], m.delivered.to_us());
        }
    }
    r.throughput_gbps.resize(static_cast<std::size_t>(n));
    for (int s = 0; s < n; ++s)
      for (std::size_t b = 0; b < bins; ++b)
        r.throughput_gbps[static_cast<std::size_t>(s)].push_back(
            {(static_cast<double>(b) + 0.5) * bin, bytes[static_cast<std::size_t>(s)][b] * 8 / (bin * 1e3)});
    double last_start = 0;
    for (int s = 0; s < n; ++s) last_start = std::max(last_start, start_of(s));
    const double first_done = *std::min_element(done.begin(), done.end());
    const double mid = last_start + (first_done - last_start) / 2;
    std::vector<double> share(static_cast<std::size_t>(n), 0);
    for (std::size_t i = 0; i < net.num_messages(); ++i) {
      const auto& m = net.message(static_cast<pkt::MessageId>(i));
      const double t = m.delivered.to_us();
      if (t < mid || t >= first_done) continue;
      for (int s = 0; s < n; ++s)
        if (m.spec.src == hca[static_cast<std::size_t>(s)])
          share[static_cast<std::size_t>(s)] += static_cast<double>(m.spec.bytes);
    }
    const double sum = std::accumulate(share.begin(), share.end(), 0.0);
    double sum2 = 0;
    for (double x : share) sum2 += x * x;
    r.jain_second_half = sum2 > 0 ? sum * sum / (n * sum2) : 0;
    r.bottleneck_gbps = first_done > mid ? sum * 8 / ((first_done - mid) * 1e3) : 0;
    // The bottleneck: the switch's port toward the receiver.
    for (const auto& tr : net.queue_traces())
      if (tr.node == sw && tr.port == n + 1) {
        double qs = 0;
        int cnt = 0;
        for (const auto& p : tr.queue_bytes) {
          r.queue_bytes.push_back({p.t.to_us(), p.value});
          const double t = p.t.to_us();
          if (t >= mid && t < first_done) {
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
  double x0 = 1e300, x1 = -1e300, y1 = 0;
  for (const auto& [name, pts] : series)
    for (const auto& p : pts) {
      x0 = std::min(x0, p.t_us);
      x1 = std::max(x1, p.t_us);
      y1 = std::max(y1, p.value);
    }
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
  s << "<text x=\"" << W / 2 << "\" y=\"18\" text-anchor=\"middle\" font-size=\"13\">" << title
    << "</text>\n";
  s << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - R << "\" y2=\"" << H - B
    << "\" stroke=\"black\"/>\n";
  s << "<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\"" << H - B
    << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double xv = x0 + (x1 - x0) * i / 5, yv = y1 * i / 5;
    s << "<text x=\"" << X(xv) << "\" y=\"" << H - B + 15 << "\" text-anchor=\"middle\">" << fmt(xv)
      << "</text>\n";
    s << "<text x=\"" << L - 5 << "\" y=\"" << Y(yv) + 4 << "\" text-anchor=\"end\">" << fmt(yv)
      << "</text>\n";
    s << "<line x1=\"" << L << "\" y1=\"" << Y(yv) << "\" x2=\"" << W - R << "\" y2=\"" << Y(yv)
      << "\" stroke=\"#ddd\"/>\n";
  }
  s << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 8 << "\" text-anchor=\"middle\">" << xlabel
    << "</text>\n";
  s << "<text x=\"14\" y=\"" << (T + H - B) / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
    << (T + H - B) / 2 << ")\">" << ylabel << "</text>\n";
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& [name, pts] = series[k];
    const char* c = colors[k % 8];
    s << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"1.2\" points=\"";
    // At most ~2000 points per series: thin evenly (the CSV keeps them all).
    const std::size_t step = std::max<std::size_t>(1, pts.size() / 2000);
    for (std::size_t i = 0; i < pts.size(); i += step)
      s << fmt(X(pts[i].t_us)) << "," << fmt(Y(pts[i].value)) << " ";
    if (!pts.empty()) s << fmt(X(pts.back().t_us)) << "," << fmt(Y(pts.back().value));
    s << "\"/>\n";
    s << "<line x1=\"" << W - R + 10 << "\" y1=\"" << T + 10 + 16 * k << "\" x2=\"" << W - R + 30
      << "\" y2=\"" << T + 10 + 16 * k << "\" stroke=\"" << c << "\" stroke-width=\"2\"/>\n";
    s << "<text x=\"" << W - R + 34 << "\" y=\"" << T + 14 + 16 * k << "\">" << name << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

void write_cc_results(const CcExperiment& e, const std::vector<CcRunResult>& runs, const std::string& dir) {
  std::filesystem::create_directories(dir);
  auto open = [&](const std::string& name) {
    std::ofstream o(dir + "/" + name);
    if (!o) throw InputError(dir + "/" + name + ": cannot write");
    return o;
  };
  {
    auto o = open("rates.csv");
    o << "variant,sender,t_us,rate_gbps\n";
    for (const auto& r : runs)
      for (std::size_t s = 0; s < r.rate_gbps.size(); ++s)
        for (const auto& p : r.rate_gbps[s])
          o << r.label << "," << s << "," << fmt(p.t_us) << "," << fmt(p.value) << "\n";
  }
  {
    auto o = open("throughput.csv");
    o << "variant,sender,t_us,gbps\n";
    for (const auto& r : runs)
      for (std::size_t s = 0; s < r.throughput_gbps.size(); ++s)
        for (const auto& p : r.throughput_gbps[s])
          o << r.label << "," << s << "," << fmt(p.t_us) << "," << fmt(p.value) << "\n";
  }
  {
    auto o = open("queue.csv");
    o << "variant,t_us,queue_bytes\n";
    for (const auto& r : runs)
      for (const auto& p : r.queue_bytes) o << r.label << "," << fmt(p.t_us) << "," << fmt(p.value) << "\n";
  }
  nlohmann::json sum = {{"name", e.name}, {"description", e.description}, {"runs", nlohmann::json::array()}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto js = runs[i].summary();
    js["packet"] = e.variants[i].packet;
    sum["runs"].push_back(js);
  }
  open("summary.json") << sum.dump(2) << "\n";
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
  open("rates.svg") << svg_chart(e.name + ": DCQCN/IB CC rate per sender", "time (us)", "rate (Gb/s)", rates);
  open("throughput.svg") << svg_chart(e.name + ": delivered throughput", "time (us)", "Gb/s", tput);
  open("queue.svg") << svg_chart(e.name + ": bottleneck queue", "time (us)", "bytes", queue);
}

} // namespace ibn::scen
