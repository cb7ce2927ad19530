#include "analysis/points.hpp"

#include "analysis/results.hpp"
#include "scenarios/runner.hpp"
#include "sim/atomic_file.hpp"
#include "sim/child_processes.hpp"
#include "sim/error.hpp"
#include "sim/version.hpp"

#include <atomic>
#include <exception>
#include <filesystem>
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
std::optional<PointResult> reuse(const std::string& path, const scen::Scenario& s) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    auto old = read_point(path);
    if (old.manifest.config == s.effective && old.manifest.version == kVersion) return old;
  } catch (const std::exception&) {
    // unreadable, from an older version or from another configuration: run the point again
  }
  return std::nullopt;
}

/// Runs one point in this process.
PointResult run_point(const scen::Scenario& s, const std::function<void(const std::string&)>& progress) {
  scen::RunOptions ro;
  ro.progress = progress;
  const auto w = scen::build_world(s);
  auto r = scen::run_scenario(s, w, ro);
  r.warnings.insert(r.warnings.begin(), w.warnings.begin(), w.warnings.end());
  return point_result(r);
}

} // namespace

std::vector<std::optional<PointResult>> run_points(const scen::Scenario& base, const std::vector<StudyPoint>& points,
                                                   const PointsOptions& opt) {
  std::vector<std::optional<PointResult>> results(points.size());
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (static_cast<int>(i % static_cast<std::size_t>(std::max(1, opt.ranks))) == opt.rank) mine.push_back(i);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  std::mutex mu; // guards progress output and the first error
  std::exception_ptr error;
  auto say = [&](const std::string& line) {
    if (!opt.progress) return;
    std::lock_guard lock(mu);
    opt.progress(line);
  };
  auto worker = [&] {
    for (;;) {
      const auto k = next.fetch_add(1);
      if (k >= mine.size()) return;
      const auto i = mine[k];
      const auto& p = points[i];
      try {
        const auto s = scen::make_scenario(base.effective, base.file, base.base_dir, p.overrides);
        const auto path = point_results_path(opt.out_dir, p);
        results[i] = reuse(path, s);
        const bool reused = results[i].has_value();
        const auto progress = [&, id = p.id](const std::string& line) { say("[" + id + "] " + line); };
        if (!reused && opt.external) {
          opt.external(s.effective, path);
          results[i] = read_point(path);
        } else if (!reused && s.engine == scen::EngineKind::Flow) {
          // SimGrid allows one flow engine per process, ever: each flow point runs in a child process, which
          // hands its results.json text back.
          const auto text =
              run_in_child_process([&] { return to_json(run_point(s, progress)).dump(2) + "\n"; });
          results[i] = point_result_from_json(nlohmann::json::parse(text), path);
          write_file_atomic(path, text);
        } else if (!reused) {
          results[i] = run_point(s, progress);
          write_file_atomic(path, to_json(*results[i]).dump(2) + "\n");
        }
        const auto done = ++finished;
        say("point " + std::to_string(done) + "/" + std::to_string(mine.size()) + " " + p.id +
            (reused ? " (reused from an earlier run)" : " done"));
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next = mine.size(); // hand out no more points
        return;
      }
    }
  };
  const unsigned n = std::max(1u, std::min<unsigned>(opt.threads, static_cast<unsigned>(mine.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return results;
}

std::vector<PointResult> collect_points(const std::vector<StudyPoint>& points, const std::string& out_dir) {
  std::vector<PointResult> out;
  for (const auto& p : points) out.push_back(read_point(point_results_path(out_dir, p)));
  return out;
}

} // namespace ibn::analysis
