#include "analysis/points.hpp"

#include "analysis/results.hpp"
#include "scenarios/runner.hpp"
#include "sim/atomic_file.hpp"
#include "sim/child_process.hpp"
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

/// The earlier result of this exact configuration, if one was written.
bool reuse(const std::string& path, const scen::Scenario& s, nlohmann::json& out) {
  if (!std::filesystem::exists(path)) return false;
  try {
    auto old = nlohmann::json::parse(read_file(path));
    if (old.at("manifest").at("config") == s.effective && old.at("manifest").at("version") == kVersion) {
      out = std::move(old);
      return true;
    }
  } catch (const std::exception&) {
    // unreadable or from another configuration: run the point again
  }
  return false;
}

} // namespace

std::vector<nlohmann::json> run_points(const scen::Scenario& base, const std::vector<StudyPoint>& points,
                                       const PointsOptions& opt) {
  std::vector<nlohmann::json> results(points.size());
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
        const bool reused = reuse(path, s, results[i]);
        if (!reused && opt.external) {
          opt.external(s.effective, path);
          results[i] = nlohmann::json::parse(read_file(path));
        } else if (!reused) {
          auto run = [&, id = p.id] {
            scen::RunOptions ro;
            ro.progress = [&](const std::string& line) { say("[" + id + "] " + line); };
            const auto w = scen::build_world(s);
            auto r = scen::run_scenario(s, w, ro);
            r.warnings.insert(r.warnings.begin(), w.warnings.begin(), w.warnings.end());
            return results_json(r).dump(2) + "\n";
          };
          // SimGrid allows one flow engine per process, ever: each flow point runs in a child process.
          const auto text = s.engine == "flow" ? run_in_child_process(run) : run();
          results[i] = nlohmann::json::parse(text);
          write_file_atomic(path, text);
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

std::vector<nlohmann::json> collect_points(const std::vector<StudyPoint>& points, const std::string& out_dir) {
  std::vector<nlohmann::json> out;
  for (const auto& p : points) {
    const auto path = point_results_path(out_dir, p);
    try {
      out.push_back(nlohmann::json::parse(read_file(path)));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(path + ": unreadable results: " + e.what());
    }
  }
  return out;
}

} // namespace ibn::analysis
