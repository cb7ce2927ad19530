// `ibnetsim calibrate fit|check|measure` (docs/calibration.md, docs/CLI.md "Calibration and validation").
// fit: perftest outputs -> profile JSON (calibration/fit.hpp); check: re-run the measured tests in the
// packet engine with a profile (scenarios/calibrate_check.hpp); measure: run real perftest on a testbed
// (calibration/measure.hpp).
#include "analysis/nccl_cost_fit.hpp"
#include "analysis/nccl_tests.hpp"
#include "analysis/validate.hpp"
#include "analysis/validate_repeats.hpp"
#include "apps/commands.hpp"
#include "calibration/fit.hpp"
#include "calibration/measure.hpp"
#include "calibration/nccl_tests_parser.hpp"
#include "calibration/profile.hpp"
#include "scenarios/calibrate_check.hpp"
#include "scenarios/perftest.hpp"
#include "sim/atomic_file.hpp"
#include "sim/build_id.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"
#include "sim/version.hpp"
#include "topology/link_speed.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace ibn::app {
namespace {

std::string read_all(const std::string& path) {
  refuse_folder(path, "a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// "4xQDR", "QDR", "HDR100", "NDR200" (link generations) or "100G", "200Gbps", "400Gb/s" (plain) -> Gb/s.
double parse_link_rate(const std::string& text) {
  try {
    return topo::parse_link_speed(text, "--link-rate").rate_gbps();
  } catch (const InputError&) {
  }
  try {
    return static_cast<double>(parse_plain_rate_bps(text, "--link-rate")) * 1e-9;
  } catch (const InputError&) {
  }
  throw InputError("--link-rate: '" + text +
                   "' is neither a link (4xQDR, HDR, NDR200, ...) nor a rate (100G, 200Gbps, 400Gb/s)");
}

void print_variability(const calib::VariabilityModel& v) {
  std::printf("  variability from %zu runs: run state sigma", v.inputs.size());
  for (const auto& s : v.state) std::printf(" %s:%.4f", format_size(s.size_bytes).c_str(), s.sigma);
  std::printf("\n  launch jitter per iteration: body median %.3f us (sigma %.2f), tail p %.3g, xm %.1f us, "
              "alpha %.2f "
              "(%llu pairs, %llu tail events)\n",
              v.launch.median, v.launch.sigma, v.launch.tail_p, v.launch.tail_xm, v.launch.tail_alpha,
              static_cast<unsigned long long>(v.within_pairs),
              static_cast<unsigned long long>(v.tail_events));
  for (const auto& n : v.notes) std::printf("  note: %s\n", n.c_str());
}

struct FitOpts {
  std::vector<std::string> files;
  std::string out;
  std::string link_rate;
  std::string cable_m = "3";
  std::string switch_latency_ns;
  int hops = 0;
  std::vector<std::string> file_hops;
  int max_segments = 4;
  std::string nccl_max_bytes = "64K";
  std::string nccl_engine = "packet";
  std::string nccl_fabric;
  std::uint32_t nccl_nics = 0;
  std::vector<std::string> nccl_sets;
  std::vector<std::string> repeats;
  std::string base;
  bool nccl_engine_given = false, nccl_max_bytes_given = false; ///< on the command line
};

/// True for an nccl-tests log: one with a results row, or one with lines only nccl-tests prints ("# nThread",
/// "out-of-place", all_reduce_perf, ...) whose table does not read (cut or garbled mid-table): for those the
/// nccl-tests reader's error, naming the file and line, is thrown (read as perftest they said "no perftest
/// result table" and the reader's notes were lost). Anything else is perftest's to read.
bool is_nccl_tests_log(const std::string& file, const std::string& content) {
  std::istringstream in(content);
  try {
    return !calib::parse_nccl_tests(in, file).empty();
  } catch (const InputError& e) {
    std::istringstream again(content);
    const auto marker = calib::nccl_tests_marker_line(again);
    if (!marker) return false;
    throw InputError(std::string(e.what()) + " (read as an nccl-tests log: line " + std::to_string(*marker) +
                     " of " + file + " is nccl-tests output)");
  }
}

/// The manifest every calibrate result carries, as a run's results.json does (analysis/results.cpp): the
/// version and build that wrote it, the command, its inputs with their FNV-1a 64 hashes and the effective
/// options.
nlohmann::json calib_manifest(const std::string& command, const std::vector<std::string>& inputs,
                              nlohmann::json options) {
  for (const auto& f : inputs) refuse_folder(f, "a file");
  return {{"tool", "ibnetsim"},  {"command", "calibrate " + command},     {"version", kVersion},
          {"build", build_id()}, {"inputs", calib::input_hashes(inputs)}, {"options", std::move(options)}};
}

nlohmann::json fit_options_json(const FitOpts& o) {
  return {{"output", o.out},
          {"link_rate", o.link_rate.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.link_rate)},
          {"cable_m", o.cable_m},
          {"switch_latency_ns",
           o.switch_latency_ns.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.switch_latency_ns)},
          {"hops", o.hops},
          {"file_hops", o.file_hops},
          {"max_segments", o.max_segments},
          {"nccl_max_bytes", o.nccl_max_bytes},
          {"nccl_engine", o.nccl_engine},
          {"nccl_fabric", o.nccl_fabric.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.nccl_fabric)},
          {"nccl_nics", o.nccl_nics == 0 ? nlohmann::json(nullptr) : nlohmann::json(o.nccl_nics)},
          {"nccl_set", o.nccl_sets},
          {"repeats", o.repeats},
          {"base", o.base.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.base)}};
}

void run_fit(const FitOpts& o) {
  if (o.files.empty() && o.repeats.empty())
    throw InputError(
        "calibrate fit: give perftest FILES, or --repeats LOG LOG ... (with FILES or --base PROFILE)");
  if (!o.base.empty() && !o.files.empty())
    throw InputError(
        "--base: give either perftest FILES (a new device fit) or --base PROFILE (an existing one)");
  if (!o.base.empty() && o.repeats.empty()) throw InputError("--base: only with --repeats");
  if (!o.repeats.empty() && o.files.empty() && o.base.empty())
    throw InputError(
        "--repeats: the variability model is written into a device profile; give the perftest FILES to "
        "fit one, or --base PROFILE to add it to an existing profile");
  std::vector<std::string> inputs = o.files;
  inputs.insert(inputs.end(), o.repeats.begin(), o.repeats.end());
  if (!o.base.empty()) inputs.push_back(o.base);
  refuse_output_equal_to_input(o.out, inputs, "-o");
  // A file given twice would count its rows twice in the fits (--repeats checks its own list).
  refuse_same_file_twice(o.files, "each input once");
  const auto manifest = calib_manifest("fit", inputs, fit_options_json(o));
  if (o.files.empty()) {
    calib::Profile p = calib::Profile::load(o.base);
    p.variability = analysis::fit_repeats(o.repeats, {});
    p.manifest = manifest; // this command's, replacing the base profile's
    write_file_atomic(o.out,
                      p.to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (names_stdout(o.out)) return; // the profile is on standard output: no summary mixed into it
    std::printf("profile %s: %s with the variability of %zu runs\n", o.out.c_str(), o.base.c_str(),
                o.repeats.size());
    print_variability(*p.variability);
    return;
  }
  calib::FitOptions opt;
  opt.generator = std::string("ibnetsim ") + kVersion + " calibrate fit";
  if (!o.link_rate.empty()) {
    opt.link_rate_gbps = parse_link_rate(o.link_rate);
    opt.link_rate_source = "--link-rate " + o.link_rate;
  }
  opt.cable_m = parse_nonneg_double(o.cable_m, "--cable-m");
  refuse_set_twice(o.nccl_sets, "--nccl-set");
  if (!o.switch_latency_ns.empty())
    opt.switch_latency_ns = parse_nonneg_double(o.switch_latency_ns, "--switch-latency-ns");
  if (o.max_segments < 1 || o.max_segments > 8) throw InputError("--max-segments: must be 1..8");
  opt.max_segments = o.max_segments;
  if (o.hops < 0 || o.hops > calib::kMaxProfileHops) throw InputError("--hops: must be 0..16");
  int most_hops = o.hops; // the longest measured path: (hops + 1) cables
  refuse_output_equal_to_input(o.out, o.files, "-o");
  std::vector<calib::FitSource> src;
  std::vector<std::string> nccl_logs;
  for (const auto& f : o.files) {
    auto content = read_all(f);
    if (is_nccl_tests_log(f, content))
      nccl_logs.push_back(f);
    else
      src.push_back({f, std::move(content), o.hops});
  }
  for (const auto& fh : o.file_hops) {
    const auto eq = fh.rfind('=');
    if (eq == std::string::npos) throw InputError("--file-hops: expected FILE=N, got '" + fh + "'");
    const std::string file = fh.substr(0, eq);
    const auto n = fh.substr(eq + 1) == "0" ? 0 : parse_positive_int(fh.substr(eq + 1), "--file-hops " + fh);
    if (n > calib::kMaxProfileHops) throw InputError("--file-hops " + fh + ": hops must be 0..16");
    for (const auto& before : o.file_hops) {
      if (&before == &fh) break;
      if (before.substr(0, before.rfind('=')) == file)
        throw InputError("--file-hops " + fh + ": '" + file + "' already has --file-hops " + before +
                         "; give each file once");
    }
    most_hops = std::max(most_hops, static_cast<int>(n));
    bool found = false;
    for (auto& s : src)
      if (s.file == file) s.hops = static_cast<int>(n), found = true;
    if (!found) throw InputError("--file-hops " + fh + ": '" + file + "' is not one of the input files");
  }
  // The profile's path is (hops + 1) cables of --cable-m; perftest --profile and calibrate check simulate it
  // as one cable of that length, which may not pass the generators' 100,000 m.
  if ((most_hops + 1) * opt.cable_m > calib::kMaxPathCableM)
    throw InputError("--cable-m " + o.cable_m + ": " + std::to_string(most_hops + 1) + " cable(s) of it (" +
                     std::to_string(most_hops) +
                     " switch hop(s)) are more than the 100,000 m a path may have");
  calib::Profile p;
  if (!src.empty()) {
    p = calib::fit_profile(src, opt);
  } else {
    // nccl-tests logs only: the device part keeps the engine defaults.
    p.generator = opt.generator;
    p.link_rate_source = "unknown";
    p.warnings.push_back("no perftest input: the device settings are the engine defaults");
  }
  analysis::refuse_job_keys_in_sets(o.nccl_sets, "--nccl-set", "the logs (their test, sizes, nodes, GPUs)",
                                    false);
  if (nccl_logs.empty() && (!o.nccl_sets.empty() || o.nccl_nics != 0 || !o.nccl_fabric.empty() ||
                            o.nccl_engine_given || o.nccl_max_bytes_given))
    throw InputError("--nccl-set/--nccl-nics/--nccl-fabric/--nccl-engine/--nccl-max-bytes: no nccl-tests log "
                     "among the inputs to simulate");
  if (!nccl_logs.empty()) {
    for (const auto& f : nccl_logs) {
      const auto content = read_all(f);
      calib::ProfileInput in;
      in.file = f;
      in.fnv1a64 = calib::fnv1a64_hex(content);
      in.bytes = content.size();
      in.tests.push_back("nccl-tests");
      p.inputs.push_back(in);
    }
    analysis::NcclFitOptions nf;
    nf.max_bytes = parse_size_bytes(o.nccl_max_bytes, "--nccl-max-bytes");
    if (nf.max_bytes == 0) throw InputError("--nccl-max-bytes: 0 leaves no row to fit on");
    nf.engine = o.nccl_engine;
    nf.fabric = o.nccl_fabric;
    nf.nics_per_node = o.nccl_nics;
    nf.sets = o.nccl_sets;
    p.nccl = analysis::fit_nccl_cost_section(nccl_logs, nf, p.warnings);
  }
  if (!o.repeats.empty()) p.variability = analysis::fit_repeats(o.repeats, {});
  p.manifest = manifest;
  // Bytes that are not UTF-8 in the inputs (a device name, a file name) become U+FFFD in the profile.
  write_file_atomic(o.out, p.to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (names_stdout(o.out)) return; // the profile is on standard output: no summary mixed into it
  // A short human summary.
  std::printf("profile %s: %zu input file(s), device %s, %s, MTU %u, link %s\n", o.out.c_str(),
              p.inputs.size(), p.devices.empty() ? "?" : p.devices.front().c_str(),
              p.link_layer == pkt::LinkLayer::RoCEv2 ? "RoCEv2" : "InfiniBand", p.mtu_bytes,
              p.link_rate_gbps > 0 ? (std::to_string(p.link_rate_gbps) + " Gb/s").c_str() : "rate unknown");
  for (const auto& s : p.latency)
    std::printf("  latency %8llu..%-8llu B: %.1f ns + %.4f ns/B  (R^2 %.4f, max residual %.1f ns)%s%s\n",
                static_cast<unsigned long long>(s.lo_bytes), static_cast<unsigned long long>(s.hi_bytes),
                s.a.value, s.b.value, s.a.r2, s.a.max_residual, s.note.empty() ? "" : "  after ",
                s.note.c_str());
  if (p.bw_overhead)
    std::printf(
        "  bandwidth: o = %.1f ns, B = %s Gb/s%s, overlap p = %.3g  (R^2 %.4f, max residual %.1f %%)\n",
        p.bw_overhead->value, p.bw_rate ? std::to_string(p.bw_rate->value).c_str() : "-",
        p.bw_rate_bounded ? " (at the link bound)" : "", p.bw_overlap ? p.bw_overlap->value : 1.0,
        p.bw_overhead->r2, p.bw_overhead->max_residual);
  if (p.switch_latency_fit)
    std::printf("  switch latency: %.1f ns per hop (R^2 %.4f)\n", p.switch_latency_fit->value,
                p.switch_latency_fit->r2);
  if (p.nccl)
    std::printf("  NCCL %s costs (%s, %llu rows <= %llu B): base %.2f us%s, net step %.2f us  (R^2 %.4f, max "
                "residual %.2f us)\n",
                p.nccl->version.empty() ? "?" : p.nccl->version.c_str(), p.nccl->protocol.c_str(),
                static_cast<unsigned long long>(p.nccl->base.points),
                static_cast<unsigned long long>(p.nccl->max_bytes), p.nccl->base.value,
                p.nccl->base_fixed ? " (NCCL's table value: one step count in the inputs)" : "",
                p.nccl->net_step.value, p.nccl->base.r2, p.nccl->base.max_residual);
  std::printf(
      "  engine: nic_tx %.1f ns, nic_rx %.1f ns, switch %.1f ns (%s), HCA cap %g Gb/s, message gap %.1f ns\n",
      p.nic_tx_latency.to_ns(), p.nic_rx_latency.to_ns(), p.switch_latency.to_ns(),
      p.switch_latency_source.c_str(), p.hca_rate_gbps, p.message_gap.to_ns());
  if (p.variability) print_variability(*p.variability);
  for (const auto& w : p.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
}

struct CheckOpts {
  std::string profile;
  std::vector<std::string> files;
  bool json = false;
  std::uint64_t iters = 1000;
  std::string max_bytes = "16M";
  std::uint64_t seed = 1;
};

void run_check(const CheckOpts& o) {
  refuse_same_file_twice(o.files, "each file once (its rows would count twice in the summary)");
  const calib::Profile p = calib::Profile::load(o.profile);
  scen::CheckOptions opt;
  opt.max_iterations = o.iters;
  opt.max_bytes_per_size = parse_size_bytes(o.max_bytes, "--max-bytes-per-size");
  opt.seed = o.seed;
  std::vector<scen::CheckSource> src;
  for (const auto& f : o.files) src.push_back({f, read_all(f)});
  const auto rep = scen::calibrate_check(p, src, opt);
  // A profile without a perftest-fitted device part (one fitted from nccl-tests logs only) checks the
  // engine's defaults against the files: say so, or the errors read as the fit's.
  bool device_fitted = !p.latency.empty() || p.bw_overhead.has_value();
  if (!device_fitted)
    std::cerr << "warning: " << o.profile
              << " has no perftest-fitted device settings (engine defaults): the comparison checks those\n";
  if (o.json) {
    auto j = scen::to_json(rep);
    std::vector<std::string> inputs{o.profile};
    inputs.insert(inputs.end(), o.files.begin(), o.files.end());
    j["manifest"] = calib_manifest("check", inputs,
                                   {{"iters", o.iters},
                                    {"max_bytes_per_size", opt.max_bytes_per_size},
                                    {"seed", o.seed},
                                    {"json", true}});
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << scen::to_text(rep);
  }
}

struct MeasureOpts {
  calib::MeasureOptions m;
  std::string sizes, qps, tools;
};

void run_measure(MeasureOpts o) {
  if (o.m.iterations != 0 && o.m.iterations < scen::kPerftestMinIterations)
    throw InputError("--iters " + std::to_string(o.m.iterations) + ": perftest runs at least " +
                     std::to_string(scen::kPerftestMinIterations) + " iterations (its -n refuses fewer)");
  if (!o.tools.empty()) {
    refuse_empty_items(o.tools, "--tools");
    o.m.tools = split_list(o.tools);
    refuse_listed_twice(o.m.tools, "--tools");
  }
  if (!o.sizes.empty()) {
    o.m.sizes.clear();
    refuse_empty_items(o.sizes, "--sizes");
    for (const auto& s : split_list(o.sizes)) {
      const auto b = parse_size_bytes(s, "--sizes");
      if (b < 1 || b > (1ull << 31)) throw InputError("--sizes: each size must be 1 B .. 2 GiB, got " + s);
      o.m.sizes.push_back(b);
    }
    refuse_listed_twice(o.m.sizes, split_list(o.sizes), "--sizes");
  }
  if (!o.qps.empty()) {
    refuse_empty_items(o.qps, "--qps");
    o.m.qps.clear();
    for (const auto& s : split_list(o.qps))
      o.m.qps.push_back(static_cast<int>(parse_positive_int(s, "--qps")));
    refuse_listed_twice(o.m.qps, split_list(o.qps), "--qps");
  }
  const auto manifest = calib::run_measure(o.m);
  int failed = 0;
  for (const auto& r : manifest["runs"]) {
    const int c = r["client"]["exit_code"].get<int>();
    std::printf("%-28s client exit %d, server exit %d\n", r["name"].get<std::string>().c_str(), c,
                r["server"]["exit_code"].get<int>());
    failed += c != 0;
  }
  std::printf(
      "raw outputs and manifest.json in %s; next: ibnetsim calibrate fit %s/*.client.txt -o profile.json\n",
      o.m.out_dir.c_str(), o.m.out_dir.c_str());
  if (failed > 0)
    throw InputError(std::to_string(failed) + " perftest run(s) failed; see " + o.m.out_dir +
                     "/manifest.json");
}

void add_measure_command(CLI::App& cal) {
  auto o = std::make_shared<MeasureOpts>();
  auto* m = cal.add_subcommand(
      "measure",
      "Run real perftest between two hosts (locally or over ssh) and save raw outputs + manifest.json.\n"
      "Example: ibnetsim calibrate measure --server node1 --client node2 --device mlx5_0 --ssh -o runs/");
  m->add_option("--server", o->m.server, "host that runs the perftest server")->required();
  m->add_option("--client", o->m.client, "host that runs the perftest client")->required();
  m->add_option("--server-address", o->m.server_address,
                "address the client connects to (default: --server)");
  m->add_option("--device", o->m.device, "RDMA device (perftest -d)")->capture_default_str();
  m->add_option("--sizes", o->sizes,
                "comma-separated message sizes (64K accepted); default: -a (2 B .. 8 MiB)");
  m->add_option("--qps", o->qps, "comma-separated QP counts for bw tests (default 1)");
  m->add_option("--tools", o->tools, "comma-separated tools (default ib_write_bw,ib_write_lat)");
  m->add_option("--iters", o->m.iterations, "perftest -n (default: perftest's)")->check(CLI::PositiveNumber);
  m->add_flag("--ssh", o->m.ssh, "run each side through ssh HOST (BatchMode; keys must be set up)");
  m->add_option("--port", o->m.port, "first TCP port for perftest's exchange (-p)")->capture_default_str();
  m->add_option("--sysfs-root", o->m.sysfs_root, "where RDMA devices are listed (for tests)")
      ->capture_default_str();
  m->add_option("--timeout-s", o->m.timeout_s, "per-run timeout, seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  m->add_option("-o,--output", o->m.out_dir, "output folder")->required()->check(kOutputFolder);
  m->callback([o] { run_measure(*o); });
}

} // namespace

void add_calibrate_command(CLI::App& app) {
  auto* cal =
      app.add_subcommand("calibrate", "Fit a device profile from real perftest runs, check it, or measure.");
  cal->require_subcommand(1);

  auto f = std::make_shared<FitOpts>();
  auto* fit = cal->add_subcommand(
      "fit", "Fit a profile (latency segments, bandwidth, switch latency, noise) from perftest outputs.\n"
             "Example: ibnetsim calibrate fit write_bw.txt write_lat.txt --link-rate 4xQDR -o profile.json");
  fit->add_option("FILES", f->files,
                  "perftest output files (ib_write_bw, ib_write_lat, ...) and/or nccl-tests logs (multi-node: "
                  "NCCL's base and per-step network costs)");
  fit->add_option("--repeats", f->repeats,
                  "repeated nccl-tests (or OSU) outputs of one configuration: fit the variability model "
                  "(run state, launch jitter) into the profile")
      ->expected(1, -1);
  fit->add_option("--base", f->base,
                  "with --repeats and no FILES: the profile to add the variability model to");
  fit->add_option("-o,--output", f->out, "profile JSON to write")->required();
  fit->add_option(
      "--link-rate", f->link_rate,
      "data rate of the measured link: 4xQDR, HDR, NDR200, 100G, 200Gbps (bounds B; default unknown)");
  fit->add_option("--cable-m", f->cable_m, "length of each cable of the measured path, metres")
      ->capture_default_str();
  fit->add_option(
      "--switch-latency-ns", f->switch_latency_ns,
      "per-hop switch latency to assume when it cannot be fitted (default: the link generation's)");
  fit->add_option("--hops", f->hops, "switches between the two hosts in every file")->capture_default_str();
  fit->add_option("--file-hops", f->file_hops,
                  "FILE=N: switches between the hosts for one file (repeatable)");
  fit->add_option("--nccl-max-bytes", f->nccl_max_bytes,
                  "nccl-tests inputs: fit NCCL's costs on rows up to this size")
      ->capture_default_str();
  fit->add_option("--nccl-engine", f->nccl_engine,
                  "nccl-tests inputs: engine of the simulations (packet, flow)")
      ->check(CLI::IsMember({"packet", "flow"}))
      ->capture_default_str();
  fit->add_option("--nccl-fabric", f->nccl_fabric,
                  "nccl-tests inputs: fabric of the simulations (default: a non-blocking NDR fat-tree)");
  fit->add_option("--nccl-nics", f->nccl_nics,
                  "nccl-tests inputs: NICs per node of the simulations, 1..64 (default: from the log, else "
                  "one per GPU)")
      ->check(CLI::Range(1u, 64u));
  fit->add_option("--nccl-set", f->nccl_sets,
                  "nccl-tests inputs: KEY=VALUE scenario override of the simulations (repeatable), e.g. "
                  "nccl.version=2.8.4 for logs that print no release");
  fit->add_option("--max-segments", f->max_segments, "most latency segments to try (1..8)")
      ->capture_default_str();
  fit->callback([f, fit] {
    f->nccl_engine_given = fit->count("--nccl-engine") > 0;
    f->nccl_max_bytes_given = fit->count("--nccl-max-bytes") > 0;
    run_fit(*f);
  });

  auto c = std::make_shared<CheckOpts>();
  auto* chk = cal->add_subcommand(
      "check",
      "Re-run the measured perftest tests in the packet engine with a profile; measured vs simulated.\n"
      "Example: ibnetsim calibrate check profile.json write_bw.txt write_lat.txt --json");
  chk->add_option("PROFILE", c->profile, "profile JSON from calibrate fit")->required();
  chk->add_option("FILES", c->files, "perftest output files")->required();
  chk->add_flag("--json", c->json, "print JSON rows and summary");
  chk->add_option("--iters", c->iters, "iterations per size at most (the files' counts are capped)")
      ->capture_default_str();
  chk->add_option("--max-bytes-per-size", c->max_bytes, "payload per size and direction at most")
      ->capture_default_str();
  chk->add_option("--seed", c->seed, "simulation seed (noise draws)")->capture_default_str()->check(kSeed);
  chk->callback([c] { run_check(*c); });

  struct NvOpts {
    std::string log, out, max_bytes = "1G";
    std::vector<std::string> tests;
    std::uint32_t iters = 1;
    bool json = false;
  };
  auto nv = std::make_shared<NvOpts>();
  auto* nvc = cal->add_subcommand(
      "nvlink", "Fit the intra-node (NVLink) model to a real single-node nccl-tests output by simulation.\n"
                "Example: ibnetsim calibrate nvlink all_gather.log --test all_gather_perf -o nvlink.json");
  nvc->add_option("LOG", nv->log, "nccl-tests output of one node")->required();
  nvc->add_option("--test", nv->tests, "fit on this test only (repeatable; default: every test in LOG)");
  nvc->add_option("--max-bytes", nv->max_bytes, "ignore sizes above this")->capture_default_str();
  nvc->add_option("-n,--iters", nv->iters, "simulated iterations per size")->capture_default_str();
  nvc->add_option("-o,--output", nv->out, "write {\"nvlink\": {...}, \"fit\": {...}} to this JSON file");
  nvc->add_flag("--json", nv->json, "print the JSON instead of the table");
  nvc->callback([nv] {
    analysis::NvlinkFitOptions o;
    o.tests = nv->tests;
    if (nv->iters == 0) throw InputError("-n: at least one iteration");
    o.iters = nv->iters;
    o.max_bytes = parse_size_bytes(nv->max_bytes, "--max-bytes");
    // -o naming the log would replace the measurement with the fit.
    if (!nv->out.empty()) refuse_output_equal_to_input(nv->out, {nv->log}, "-o");
    const auto fit = analysis::fit_nvlink(nv->log, o);
    auto j = fit.to_json(nv->log);
    j["manifest"] =
        calib_manifest("nvlink", {nv->log},
                       {{"tests", nv->tests},
                        {"max_bytes", o.max_bytes},
                        {"iters", o.iters},
                        {"output", nv->out.empty() ? nlohmann::json(nullptr) : nlohmann::json(nv->out)},
                        {"json", nv->json}});
    if (!nv->out.empty()) write_file_atomic(nv->out, j.dump(2) + "\n");
    if (!nv->out.empty() && names_stdout(nv->out)) return; // the JSON is on standard output already
    if (nv->json) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << analysis::validate_table(fit.validation);
    std::printf(
        "nvlink.bandwidth_gbps = %g Gb/s, nvlink.latency_us = %g us (rms log error %.4f, %d simulations)\n"
        "use: --set nvlink.bandwidth_gbps=%g --set nvlink.latency_us=%g (run, whatif, nccl-tests, "
        "validate)\n",
        fit.bandwidth_gbps, fit.latency_us, fit.rms_log_error, fit.evaluations, fit.bandwidth_gbps,
        fit.latency_us);
  });

  add_measure_command(*cal);
}

} // namespace ibn::app
