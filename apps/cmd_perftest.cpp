// `ibnetsim perftest TOOL ...`: perftest's six RC tests on the packet engine, printed in perftest's own
// layout (docs/perftest.md, docs/CLI.md "Familiar front-ends"). The simulation is scenarios/perftest.hpp;
// this file parses perftest's flags, builds the path (two HCAs back to back, or a pair of a fabric) and
// prints the banner, the header block, the table and a closing line saying the run was simulated.
#include "apps/commands.hpp"
#include "apps/fabric_loader.hpp"
#include "calibration/profile.hpp"
#include "scenarios/perftest.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"
#include "sim/version.hpp"
#include "topology/link_speed.hpp"

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace ibn::app {
namespace {

constexpr const char* kResultLine =
    "---------------------------------------------------------------------------------------\n";
/// Without -n, each size moves at most this many payload bytes per direction (docs/perftest.md).
constexpr std::uint64_t kDefaultBytesCap = 512ull << 20;
constexpr std::uint64_t kMaxMessagesPerSize = 10'000'000; ///< iterations x QPs (x 2 with -b), memory bound
constexpr std::uint64_t kMaxSize = 1ull << 31;

struct PerftestOpts {
  std::string tool;
  bool all = false;
  std::string size, iters, qps, tx_depth, mtu = "4096";
  bool bidirectional = false;
  bool report_gbits = false;
  std::string profile, fabric, pair;
  std::string rate = "NDR", cable_m = "3";
  std::uint64_t seed = 1;
  CLI::Option* rate_opt = nullptr;
  CLI::Option* cable_opt = nullptr;
  CLI::Option* mtu_opt = nullptr;
};

std::string fmt(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

std::uint64_t int_in_range(const std::string& text, const std::string& flag, std::int64_t lo, std::int64_t hi,
                           const std::string& what) {
  const std::int64_t v = parse_positive_int(text, flag);
  if (v < lo || v > hi)
    throw InputError(flag + ": " + what + " must be between " + std::to_string(lo) + " and " +
                     std::to_string(hi) + ", got " + text);
  return static_cast<std::uint64_t>(v);
}

/// One header line with two "Key : Value" pairs, the second starting at column 32 (perftest's tab stops).
std::string pair_line(const std::string& k1, const std::string& v1, const std::string& k2,
                      const std::string& v2) {
  std::string left = fmt(" %-16s: %s", k1.c_str(), v1.c_str());
  if (left.size() < 32)
    left.resize(32, ' ');
  else
    left += ' ';
  return left + fmt("%-15s: %s\n", k2.c_str(), v2.c_str());
}
std::string one_line(const std::string& k, const std::string& v) {
  return fmt(" %-16s: %s\n", k.c_str(), v.c_str());
}

std::string render(const scen::PerftestSpec& spec, const scen::PerftestPath& path,
                   const std::vector<scen::PerftestResultRow>& rows, bool gbits, bool capped) {
  const bool lat = calib::is_latency_tool(spec.tool);
  const bool read =
      spec.tool == scen::PerftestTool::ib_read_bw || spec.tool == scen::PerftestTool::ib_read_lat;
  std::ostringstream o;
  o << kResultLine;
  o << "                    " << scen::perftest_title(spec.tool, spec.bidirectional) << "\n";
  o << pair_line("Dual-port", "OFF", "Device", "ibnetsim0");
  o << pair_line("Number of qps", std::to_string(spec.qps), "Transport type", "IB");
  o << pair_line("Connection type", "RC", "Using SRQ", "OFF");
  o << one_line("TX depth", std::to_string(spec.tx_depth));
  if (!lat) o << one_line("CQ Moderation", "1");
  o << one_line("Mtu", std::to_string(path.config.mtu_bytes) + "[B]");
  o << one_line("Link type", path.config.link_layer == pkt::LinkLayer::RoCEv2 ? "Ethernet" : "IB");
  if (read)
    o << one_line("Outstand reads", std::to_string(path.config.max_rd_atomic));
  else
    o << one_line("Max inline data", "0[B]");
  o << one_line("rdma_cm QPs", "OFF");
  o << one_line("Data ex. method", "Ethernet");
  o << kResultLine;
  const auto& nodes = path.tables.hca_nodes();
  o << fmt(" local address: LID 0x%02x HCA %s\n", path.tables.lid_of_hca(spec.src),
           path.fabric.node(nodes[spec.src]).name.c_str());
  o << fmt(" remote address: LID 0x%02x HCA %s\n", path.tables.lid_of_hca(spec.dst),
           path.fabric.node(nodes[spec.dst]).name.c_str());
  o << kResultLine;
  if (lat) {
    o << " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec] "
         "  "
         "99% percentile[usec]   99.9% percentile[usec]\n";
    for (const auto& r : rows)
      o << fmt(
          " %-7llu %llu          %-7.2f        %-7.2f      %-7.2f            %-7.2f       %-7.2f         "
          "%-7.2f                 %-7.2f\n",
          static_cast<unsigned long long>(r.bytes), static_cast<unsigned long long>(r.iterations), r.t_min_us,
          r.t_max_us, r.t_typical_us, r.t_avg_us, r.t_stdev_us, r.p99_us, r.p999_us);
  } else {
    const char* unit = gbits ? "Gb/sec" : "MB/sec";
    o << fmt(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n", unit, unit);
    // perftest: MB/sec = bytes/s / 2^20, Gb/sec = bytes/s / 125e6.
    const double to_unit = gbits ? 1.0 : 1e9 / 8.0 / 1048576.0;
    for (const auto& r : rows) {
      const double peak = r.bw_peak_gbps * to_unit, avg = r.bw_avg_gbps * to_unit;
      if (gbits && avg < 0.1) // perftest's "increased accuracy" row format for tiny Gb/s values
        o << fmt(" %-7llu    %llu           %-7.6f            %-7.6f            %-7.6f\n",
                 static_cast<unsigned long long>(r.bytes), static_cast<unsigned long long>(r.iterations),
                 peak, avg, r.msg_rate_mpps);
      else
        o << fmt(" %-7llu    %-10llu       %-7.2f            %-7.2f            %-7.6f\n",
                 static_cast<unsigned long long>(r.bytes), static_cast<unsigned long long>(r.iterations),
                 peak, avg, r.msg_rate_mpps);
    }
  }
  o << kResultLine;
  o << " Simulated by ibnetsim " << kVersion << " (packet engine, seed " << spec.seed
    << "): " << path.description;
  if (capped) o << "; iterations capped at 512 MiB per size (-n overrides)";
  if (spec.profile) o << "; profile " << spec.profile->generator;
  o << "\n";
  return o.str();
}

void run(const PerftestOpts& o) {
  std::shared_ptr<const calib::Profile> profile;
  if (!o.profile.empty()) {
    try {
      profile = std::make_shared<const calib::Profile>(calib::Profile::load(o.profile));
    } catch (const InputError& e) {
      throw InputError(std::string("--profile: ") + e.what());
    }
  }
  scen::PerftestSpec spec;
  spec.profile = profile;
  spec.tool = scen::parse_perftest_tool(o.tool);
  const bool lat = calib::is_latency_tool(spec.tool);
  if (o.all && !o.size.empty())
    throw InputError("-a and -s " + o.size +
                     " cannot be used together (-a runs every size from 2 to 8388608 bytes)");
  if (o.all) {
    spec.sizes = scen::perftest_all_sizes();
  } else if (!o.size.empty()) {
    const std::uint64_t s = parse_size_bytes(o.size, "-s");
    if (s < 1 || s > kMaxSize)
      throw InputError("-s: message size must be between 1 and " + std::to_string(kMaxSize) + " bytes, got " +
                       o.size);
    spec.sizes = {s};
  } else {
    spec.sizes = {scen::perftest_default_size(spec.tool)};
  }
  if (!o.iters.empty()) {
    spec.iterations = int_in_range(o.iters, "-n", static_cast<std::int64_t>(scen::kPerftestMinIterations),
                                   100000000, "iterations");
  } else {
    spec.iterations = scen::perftest_default_iterations(spec.tool);
    spec.max_bytes_per_size = kDefaultBytesCap;
  }
  if (!o.qps.empty())
    spec.qps = static_cast<std::uint32_t>(int_in_range(o.qps, "-q", 1, 16384, "the number of QPs"));
  spec.tx_depth = scen::perftest_default_tx_depth(spec.tool);
  if (!o.tx_depth.empty())
    spec.tx_depth = static_cast<std::uint32_t>(int_in_range(o.tx_depth, "-t", 1, 15000, "TX depth"));
  spec.bidirectional = o.bidirectional;
  // Every message keeps a record and a completion sample: -n 1e8 grew past 4 GB in 20 s, -q 16384 (82 M
  // messages at the default 5000) past 8 GB. Bounded per size, before anything is allocated.
  if (const std::uint64_t msgs = std::uint64_t{spec.iterations} * spec.qps * (spec.bidirectional ? 2 : 1);
      msgs > kMaxMessagesPerSize)
    throw InputError("-n x -q" + std::string(spec.bidirectional ? " x 2 (-b)" : "") + ": " +
                     std::to_string(msgs) + " messages per size; at most " +
                     std::to_string(kMaxMessagesPerSize) +
                     " (each keeps a record and a sample in memory): give a smaller -n or -q");
  if (lat && spec.qps != 1) throw InputError("-q: latency tests run one QP (as perftest's *_lat)");
  if (lat && spec.tx_depth != 1)
    throw InputError("-t: latency tests keep one message in flight (TX depth 1)");
  if (lat && spec.bidirectional) throw InputError("-b: bidirectional is only available in BW tests");
  // perftest accepts --report_gbits on its latency tests and ignores it (they print times): accepted here
  // too, so that a real command line runs, but said (docs/perftest.md).
  if (lat && o.report_gbits)
    std::cerr << "warning: --report_gbits has no effect on " << o.tool
              << " (a latency test reports times in usec; perftest accepts and ignores it too)\n";
  spec.seed = o.seed;

  pkt::PacketConfig base;
  if (profile) calib::apply(*profile, base);
  const auto mtu = int_in_range(o.mtu, "-m", 256, 4096, "the MTU");
  if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
    throw InputError("-m: MTU must be 256, 512, 1024, 2048 or 4096, got " + o.mtu);
  if (!profile || o.mtu_opt->count() > 0) base.mtu_bytes = static_cast<std::uint32_t>(mtu);

  scen::PerftestPath path;
  if (!o.fabric.empty() || !o.pair.empty()) {
    if (o.fabric.empty()) throw InputError("--pair needs --fabric (the fabric the two HCAs belong to)");
    if (o.pair.empty())
      throw InputError("--fabric needs --pair HOST_A,HOST_B (two HCA node names of the fabric)");
    if (o.rate_opt->count() > 0)
      throw InputError("--rate applies to the default back-to-back cable, not to --fabric");
    if (o.cable_opt->count() > 0)
      throw InputError("--cable-m applies to the default back-to-back cable, not to --fabric");
    const auto comma = o.pair.find(',');
    if (comma == std::string::npos || o.pair.find(',', comma + 1) != std::string::npos)
      throw InputError("--pair: expected two HCA names separated by a comma, got '" + o.pair + "'");
    LoadedFabric loaded;
    try {
      loaded = load_fabric_any(o.fabric);
    } catch (const InputError& e) {
      throw InputError(std::string("--fabric: ") + e.what());
    }
    for (const auto& w : loaded.warnings) std::cerr << "warning: " << w << "\n";
    path = scen::fabric_path(std::move(loaded.fabric), o.pair.substr(0, comma), o.pair.substr(comma + 1),
                             base, "--pair");
    if (profile) path.config.switch_latency = profile->switch_latency;
  } else if (profile) {
    // The profile's measured path: its link, (hops + 1) cables, hops switches (as calibrate check runs it).
    const auto speed =
        o.rate_opt->count() > 0 ? topo::parse_link_speed(o.rate, "--rate") : profile->engine_link_speed();
    const double len = o.cable_opt->count() > 0 ? parse_nonneg_double(o.cable_m, "--cable-m")
                                                : std::max(0.01, (profile->hops + 1) * profile->cable_m);
    path = scen::back_to_back_path(speed, len, base);
    path.config.switch_latency = Time::ps(profile->switch_latency.count_ps() * profile->hops);
    if (profile->hops > 0) path.description += ", " + std::to_string(profile->hops) + " switch hop(s)";
  } else {
    const auto speed = topo::parse_link_speed(o.rate, "--rate");
    const double len = parse_nonneg_double(o.cable_m, "--cable-m");
    path = scen::back_to_back_path(speed, len, base);
  }
  spec.src = path.src;
  spec.dst = path.dst;

  const auto rows = scen::run_perftest(path.fabric, path.tables, path.config, spec);
  bool capped = false;
  for (const auto& r : rows) capped = capped || r.iterations_per_qp < spec.iterations;
  std::cout << render(spec, path, rows, o.report_gbits, capped) << std::flush;
}

} // namespace

void add_perftest_command(CLI::App& app) {
  auto o = std::make_shared<PerftestOpts>();
  auto* c = app.add_subcommand(
      "perftest",
      "Simulate a perftest run (ib_write_bw, ib_write_lat, ib_send_bw, ib_send_lat, ib_read_bw, ib_read_lat) "
      "on the packet engine and print it in perftest's layout.\n"
      "Default path: two HCAs back to back on one cable (--rate, --cable-m); or --fabric F --pair A,B.\n"
      "Without -n, iterations are perftest's defaults (5000 bw, 1000 lat) capped so each size moves at most "
      "512 MiB per direction.\n"
      "--profile P applies a calibration profile (ibnetsim calibrate fit): device latencies, HCA cap, MTU, "
      "link "
      "layer, host latency, message gap and noise; without --rate/--cable-m the profile's measured link is "
      "used.\n"
      "Example: ibnetsim perftest ib_write_bw -a --report_gbits");
  c->add_option("TOOL", o->tool,
                "ib_write_bw, ib_write_lat, ib_send_bw, ib_send_lat, ib_read_bw or ib_read_lat")
      ->required();
  c->add_flag("-a,--all", o->all, "run sizes 2, 4, ..., 8388608 bytes");
  c->add_option("-s,--size", o->size, "message size in bytes (64K accepted; default 65536 bw, 2 lat)");
  c->add_option(
      "-n,--iters", o->iters,
      "iterations per QP (default 5000 bw, 1000 lat, capped at 512 MiB per size; -n is never capped)");
  c->add_option("-q,--qp", o->qps, "QPs (bw tests; default 1)");
  c->add_option("-t,--tx-depth", o->tx_depth, "outstanding messages per QP (bw tests; default 128)");
  c->add_flag("-b,--bidirectional", o->bidirectional, "both sides send; the sum is reported (bw tests)");
  c->add_flag("--report_gbits", o->report_gbits, "report Gb/sec instead of MB/sec (MB = 2^20 bytes)");
  o->mtu_opt =
      c->add_option("-m,--mtu", o->mtu, "path MTU: 256, 512, 1024, 2048 or 4096 (default: the profile's)")
          ->capture_default_str();
  c->add_option("--profile", o->profile, "device profile JSON from `ibnetsim calibrate fit`");
  c->add_option("--fabric", o->fabric, "fabric JSON or ibnetdiscover output (with --pair)");
  c->add_option("--pair", o->pair, "HOST_A,HOST_B: the client and server HCA node names of --fabric");
  o->rate_opt = c->add_option("--rate", o->rate, "back-to-back cable rate: NDR, HDR, EDR, NDR200, ...")
                    ->capture_default_str();
  o->cable_opt =
      c->add_option("--cable-m", o->cable_m, "back-to-back cable length in metres (<= 5 m: DAC, else fibre)")
          ->capture_default_str();
  c->add_option("--seed", o->seed, "simulation seed")->capture_default_str()->check(kSeed);
  c->callback([o] { run(*o); });
}

} // namespace ibn::app
