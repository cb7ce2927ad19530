#include "analysis/points.hpp"

#include "analysis/results.hpp"
#include "analysis/segments.hpp"
#include "models/engines.hpp"
#include "scenarios/runner.hpp"
#include "sim/atomic_file.hpp"
#include "sim/build_id.hpp"
#include "sim/child_processes.hpp"
#include "sim/error.hpp"
#include "sim/progress.hpp"
#include "sim/units.hpp"
#include "sim/version.hpp"
#include "topology/fabric_io.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

namespace ibn::analysis {

std::string point_results_path(const std::string& out_dir, const StudyPoint& p) {
  return out_dir + "/points/" + p.id + "/results.json";
}

namespace {

PointResult read_point(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": unreadable results: " + e.what());
  }
  return point_result_from_json(j, path);
}

/// The earlier result of this exact configuration, if one was written.
std::optional<PointResult> reuse(const std::string& path, const scen::Scenario& s, const PointsOptions& opt) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    auto old = read_point(path);
    // A point run to a tail precision is reused only for the same target and cap.
    const bool same_target =
        opt.tail_precision > 0
            ? old.manifest.tail_precision.is_object() &&
                  old.manifest.tail_precision.value("target_pct", -1.0) ==
                      std::round(opt.tail_precision * 100 * 1e4) / 1e4 &&
                  old.manifest.tail_precision.value("max_iterations", std::uint64_t{0}) == opt.max_iterations
            : old.manifest.tail_precision.is_null();
    // Same release and same binary: another build's models may give other numbers for the same config.
    if (old.manifest.config == s.effective && old.manifest.version == kVersion &&
        old.manifest.build == build_id() && same_target)
      return old;
  } catch (const std::exception&) {
    // unreadable, from an older version or from another configuration: run the point again
  }
  return std::nullopt;
}

} // namespace

std::vector<std::optional<PointResult>>
run_points(const scen::Scenario& base, const std::vector<StudyPoint>& points, const PointsOptions& opt) {
  std::vector<std::optional<PointResult>> results(points.size());
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (static_cast<int>(i % static_cast<std::size_t>(std::max(1, opt.ranks))) == opt.rank) mine.push_back(i);
  std::mutex mu; // guards progress output and the first error
  auto say = [&](const std::string& line) {
    if (!opt.progress) return;
    std::lock_guard lock(mu);
    opt.progress(line);
  };
  std::vector<std::string> names;
  for (const auto& p : points) names.push_back(p.id);
  ProgressBoard board(points.size());
  ProgressPrinter printer(board, names, opt.progress ? std::function<void(const std::string&)>(say) : nullptr,
                          opt.progress_first_s, opt.progress_every_s);
  std::size_t finished = 0;
  auto done_line = [&](std::size_t i, bool reused) {
    auto& slot = board.slot(i);
    char took[64] = "";
    if (!reused)
      std::snprintf(took, sizeof took, " in %.1f s",
                    static_cast<double>(slot.end_ns.load() - slot.start_ns.load()) / 1e9);
    say("point " + std::to_string(++finished) + "/" + std::to_string(mine.size()) + " " + points[i].id +
        (reused ? " (reused from an earlier run)" : std::string(" done") + took));
  };
  auto segment_options = [&](std::size_t i, const scen::Scenario& s) {
    SegmentOptions so;
    so.checkpoint_dir = opt.out_dir + "/points/" + points[i].id;
    so.tail_precision = opt.tail_precision;
    so.max_iterations = opt.max_iterations;
    so.progress = &board.slot(i);
    so.log = [&, id = points[i].id](const std::string& line) { say("[" + id + "] " + line); };
    // The flow engine: one SimGrid per process, so a point of several segments runs each in a child.
    so.segments_in_child_processes =
        s.engine == scen::EngineKind::Flow && (s.segment_iterations > 0 || opt.tail_precision > 0);
    return so;
  };

  // Scenarios and earlier results first (in this thread).
  std::vector<scen::Scenario> scens(points.size());
  std::vector<std::size_t> todo;
  for (const auto i : mine) {
    scens[i] = scen::point_scenario(base, points[i].overrides);
    results[i] = reuse(point_results_path(opt.out_dir, points[i]), scens[i], opt);
    if (results[i])
      done_line(i, true);
    else
      todo.push_back(i);
  }
  const unsigned parallel = std::max(1u, opt.threads);
  std::vector<std::size_t> in_process, in_children;
  for (const auto i : todo)
    (!opt.external && scens[i].engine == scen::EngineKind::Flow ? in_children : in_process).push_back(i);

  // Flow-engine points in independent segments: the segments of all of them are the units handed to
  // `parallel` children (point by point, in segment order), so the study's last point does not run alone on
  // one core; a point is assembled from its checkpoints when its last segment ends.
  std::vector<std::pair<std::size_t, std::uint32_t>> units; // (point, segment)
  std::vector<std::uint32_t> units_left(points.size(), 0);
  {
    std::vector<std::size_t> whole, segmented;
    for (const auto i : in_children) {
      const auto so = segment_options(i, scens[i]);
      const auto n = independent_segments(scens[i], so);
      if (n == 0) {
        whole.push_back(i);
        continue;
      }
      segmented.push_back(i);
      std::uint32_t resumed = 0;
      for (std::uint32_t seg = 0; seg < n; ++seg)
        if (segment_checkpointed(scens[i], so, seg))
          ++resumed;
        else
          units.emplace_back(i, seg);
      auto& slot = board.slot(i);
      slot.runs_total.store(n);
      slot.runs_done.store(resumed);
      slot.runs_resumed.store(resumed);
      units_left[i] = n - resumed;
      if (resumed > 0)
        say("[" + points[i].id + "] resumed " + std::to_string(resumed) + " finished segment(s) of " +
            std::to_string(n));
    }
    in_children = std::move(whole);
    auto assemble = [&](std::size_t i) {
      auto so = segment_options(i, scens[i]);
      so.log = nullptr;                       // resumed segments were announced above
      so.segments_in_child_processes = false; // every segment is checkpointed: nothing runs here
      so.progress = nullptr;
      const auto path = point_results_path(opt.out_dir, points[i]);
      results[i] = run_point_segmented(scens[i], so);
      write_file_atomic(path, to_json(*results[i]).dump(2) + "\n");
      board.slot(i).finish();
      done_line(i, false);
    };
    for (const auto i : segmented)
      if (units_left[i] == 0) { // every segment was checkpointed by an interrupted run
        board.slot(i).start();
        assemble(i);
      }
    if (!units.empty())
      run_in_child_processes(
          units.size(),
          [&](std::size_t u) {
            const auto [i, seg] = units[u];
            auto& slot = board.slot(i);
            std::int64_t zero = 0;
            slot.start_ns.compare_exchange_strong(zero, monotonic_ns()); // the point's first segment
            run_segment_to_checkpoint(scens[i], segment_options(i, scens[i]), seg);
            return std::string();
          },
          parallel,
          [&](std::size_t u, std::string) {
            const auto i = units[u].first;
            auto& slot = board.slot(i);
            slot.runs_done.fetch_add(1);
            slot.run_done.store(0);
            if (--units_left[i] == 0) assemble(i);
          },
          [&] { printer.tick(); });
  }

  // Other flow-engine points: one forked child each, `parallel` at a time; this thread waits and prints.
  if (!in_children.empty()) {
    run_in_child_processes(
        in_children.size(),
        [&](std::size_t k) {
          const auto i = in_children[k];
          auto& slot = board.slot(i);
          slot.start();
          const auto so = segment_options(i, scens[i]);
          auto r = run_point_segmented(scens[i], so);
          slot.finish();
          return to_json(r).dump(2) + "\n";
        },
        parallel,
        [&](std::size_t k, std::string text) {
          const auto i = in_children[k];
          const auto path = point_results_path(opt.out_dir, points[i]);
          results[i] = point_result_from_json(nlohmann::json::parse(text), path);
          write_file_atomic(path, text);
          done_line(i, false);
        },
        [&] { printer.tick(); });
  }

  // Packet-engine points (and `external` ones): threads of this process.
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  auto worker = [&] {
    for (;;) {
      const auto k = next.fetch_add(1);
      if (k >= in_process.size()) return;
      const auto i = in_process[k];
      const auto& p = points[i];
      try {
        const auto& s = scens[i];
        const auto path = point_results_path(opt.out_dir, p);
        auto& slot = board.slot(i);
        slot.start();
        if (opt.external) {
          opt.external(s.effective, path);
          results[i] = read_point(path);
        } else {
          results[i] = run_point_segmented(s, segment_options(i, s));
          write_file_atomic(path, to_json(*results[i]).dump(2) + "\n");
        }
        slot.finish();
        done_line(i, false);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next = in_process.size(); // hand out no more points
        return;
      }
    }
  };
  if (!in_process.empty()) {
    printer.start_thread();
    const unsigned n = std::min<unsigned>(parallel, static_cast<unsigned>(in_process.size()));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    printer.stop();
  }
  if (error) std::rethrow_exception(error);
  return results;
}

std::vector<std::string>
check_points(const scen::Scenario& base, const std::vector<StudyPoint>& points,
             const std::function<std::string(const std::string&, const std::string&)>& same,
             const std::function<std::string(const StudyPoint&, const std::string&)>& blame,
             std::optional<scen::EngineKind> engine) {
  std::map<std::string, std::string> seen;  // effective scenario -> point id
  std::map<std::string, std::size_t> inert; // a key the scenario gives that changes nothing -> points
  std::map<std::string, std::size_t> notes; // how jobs land on the nodes (check_placement) -> points
  std::string fabric_key;                   // the fabric configuration `fabric` was built from
  topo::Fabric fabric;
  std::string fabric_text; // `fabric` as JSON without its origin (two spellings of one fabric compare equal)
  std::map<std::string, std::string> seen_built; // effective scenario less fabric.params, + fabric -> point
  const auto engines = eng::builtin_engines();
  for (const auto& p : points) {
    std::string first; // the point this one repeats
    try {
      const auto s = scen::point_scenario(base, p.overrides);
      for (const auto& n : s.no_effect) ++inert[n];
      if (const auto [it, fresh] = seen.emplace(s.effective.dump(), p.id); !fresh) {
        first = it->second;
      } else {
        const std::string key = s.fabric_file + "\n" + s.fabric_generator + "\n" + s.fabric_params.dump();
        if (key != fabric_key) {
          fabric = scen::build_fabric(s), fabric_key = key;
          auto fj = topo::fabric_to_json(fabric);
          fj.erase("origin");
          fj.erase("name");
          fabric_text = fj.dump();
        }
        for (const auto& n : scen::check_placement(s, fabric)) ++notes[n];
        // Two spellings of one fabric (`oversubscription=1:1,2:2`, `rate=NDR,400Gbps`) build the same one.
        auto eff = s.effective;
        if (eff.contains("fabric")) eff["fabric"].erase("params");
        if (const auto [it2, fresh2] = seen_built.emplace(eff.dump() + "\n" + fabric_text, p.id); !fresh2)
          first = it2->second;
        // What the point's engine ignores (the run says so only in the point's results.json): a flow point
        // labelled dcqcn runs without CC.
        // (Without the calibration profile the run applies first: settings that are valid only on top of it
        // are left to the run, which reports them.)
        pkt::PacketConfig device;
        bool settled = true;
        try {
          scen::apply_packet_settings(s, device);
        } catch (const InputError&) {
          settled = false;
        }
        const std::string name = scen::to_string(engine.value_or(s.engine));
        if (settled) {
          for (const auto& w : eng::ignored_features(name, engines.get(name).factory.capabilities, device))
            ++inert[w];
          // Service levels on one VL, with the VLs the routing needs added as build_world adds them.
          const int vls = std::max(device.num_vls, scen::routing_min_vls(scen::resolved_routing(s, fabric)));
          if (engine.value_or(s.engine) == scen::EngineKind::Packet)
            for (const auto& n : scen::sl_notes(s, static_cast<std::uint32_t>(vls))) ++inert[n];
        }
      }
    } catch (const InputError& e) {
      throw InputError(blame(p, e.what()));
    }
    if (!first.empty()) throw InputError(same(first, p.id));
  }
  auto out = scen::study_no_effect(inert, points.size());
  for (const auto& [line, n] : notes)
    out.push_back(line + (n < points.size() ? " (on " + std::to_string(n) + " of " +
                                                  std::to_string(points.size()) + " points)"
                                            : std::string()));
  return out;
}

std::vector<std::string> unmeasured_notes(const std::vector<StudyPoint>& points,
                                          const std::vector<PointResult>& results) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < points.size() && i < results.size(); ++i) {
    const auto& r = results[i];
    std::string why; // the point's run warnings that explain it (a time limit, a failed QP)
    for (const auto& w : r.warnings)
      if (w.find("max_sim_time_ms") != std::string::npos || w.find("QP") != std::string::npos)
        why += (why.empty() ? "" : "; ") + w;
    for (const auto& c : r.collectives)
      if (!c.background && !c.completion_us)
        out.push_back("point " + points[i].id + ": job " + c.job + ", " + c.op + " " +
                      format_size(c.size_bytes) + ": no measured iteration completed" +
                      (why.empty() ? "" : " (" + why + ")") + "; left out of the rows");
  }
  return out;
}

std::vector<PointResult> collect_points(const std::vector<StudyPoint>& points, const std::string& out_dir) {
  std::vector<PointResult> out;
  for (const auto& p : points) out.push_back(read_point(point_results_path(out_dir, p)));
  return out;
}

} // namespace ibn::analysis
