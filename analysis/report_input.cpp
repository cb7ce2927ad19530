// Reading a report's input: a plan.json / whatif.json / results.json file or folder, or a sweep folder
// (points/<id>/results.json) turned into a what-if style document. See report.hpp.
#include "analysis/report.hpp"

#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/json_text.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

namespace ibn::analysis {

using nlohmann::json;

std::optional<double> ratio_value(const std::string& s) {
  const auto colon = s.find(':');
  if (colon == std::string::npos) return std::nullopt;
  double a = 0, b = 0;
  const char* p = s.data();
  const auto ra = std::from_chars(p, p + colon, a);
  const auto rb = std::from_chars(p + colon + 1, p + s.size(), b);
  if (ra.ec != std::errc{} || ra.ptr != p + colon || rb.ec != std::errc{} || rb.ptr != p + s.size())
    return {};
  if (!(a > 0) || !(b > 0)) return std::nullopt;
  return a / b;
}

namespace {

/// A sweep folder (points/<id>/results.json, no summary file): a what-if style document with one row per
/// point and measured collective; a row's ratio is the point's fabric.params.oversubscription (1:1 when it
/// has none) and its routing label the point's routing.adaptive (static/adaptive) — or, when points differ in
/// more than these two (seeds, other keys), the point's folder name, so every point is its own curve.
ReportInput load_sweep_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> points;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "points"))
    if (fs::exists(e.path() / "results.json")) points.push_back(e.path());
  std::sort(points.begin(), points.end());
  // The sweep's own summary, when written: its points only (a folder reused by another sweep keeps the
  // earlier sweep's points, which are not this study's), and its base configuration.
  json summary_manifest;
  std::size_t stale = 0;
  if (const auto sp = fs::path(dir) / "summary.json"; fs::exists(sp)) {
    summary_manifest = parse_json_text(read_file(sp.string()), sp.string()).value("manifest", json::object());
    if (summary_manifest.contains("point_ids") && summary_manifest["point_ids"].is_array()) {
      std::set<std::string> ids;
      for (const auto& id : summary_manifest["point_ids"])
        if (id.is_string()) ids.insert(id.get<std::string>());
      const auto before = points.size();
      std::erase_if(points, [&](const fs::path& p) { return !ids.count(p.filename().string()); });
      stale = before - points.size();
    }
  }
  if (points.empty()) throw InputError(dir + "/points: no point has a results.json yet");
  json rows = json::array(), manifest = json::object();
  std::set<std::string> engines;
  for (const auto& p : points) {
    const std::string file = (p / "results.json").string();
    const json r = parse_json_text(read_file(file), file);
    const json m = r.value("manifest", json::object());
    engines.insert(m.value("engine", std::string()));
    if (manifest.empty()) {
      manifest = {{"version", m.value("version", std::string())},
                  {"engine", m.value("engine", std::string())},
                  {"seed", m.value("seed", json(nullptr))},
                  {"source", "sweep of " + std::to_string(points.size()) + " points" +
                                 (stale ? " (" + std::to_string(stale) +
                                              " other point folder(s) not in its summary.json left out)"
                                        : std::string())},
                  // The sweep's base configuration; without a summary, the first point's.
                  {"config", summary_manifest.is_object() && summary_manifest.contains("config")
                                 ? summary_manifest["config"]
                                 : m.value("config", json::object())}};
    }
    std::string ratio = "1:1";
    const json cfg = m.value("config", json::object());
    if (cfg.contains("fabric") && cfg["fabric"].contains("params") &&
        cfg["fabric"]["params"].contains("oversubscription")) {
      const auto& o = cfg["fabric"]["params"]["oversubscription"];
      if (o.is_string() && ratio_value(o.get<std::string>().substr(0, o.get<std::string>().find(','))))
        ratio = o;
    }
    ratio = ratio.substr(0, ratio.find(','));
    for (const auto& c : r.value("collectives", json::array())) {
      if (c.value("background", false) || !c.contains("completion_us")) continue;
      json row = c;
      row["oversubscription"] = ratio;
      const std::string ar =
          cfg.contains("routing") ? cfg["routing"].value("adaptive", std::string("off")) : "off";
      row["routing"] = ar == "off" ? "static" : ar == "per-packet" ? "adaptive" : "adaptive-" + ar;
      row["point"] = p.filename().string();
      row["seed"] = m.value("seed", json(nullptr));
      row["cc"] = cfg.contains("cc") ? cfg["cc"].value("algorithm", std::string()) : std::string();
      row["links"] = r.value("links", json::object());
      row.erase("name");
      rows.push_back(std::move(row));
    }
  }
  // Points that differ in more than ratio and routing (seeds, other keys) keep their folder name as label.
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  bool clash = false;
  for (const auto& r : rows) {
    const auto k = std::make_tuple(r["oversubscription"].get<std::string>(), r["routing"].get<std::string>(),
                                   r.value("job", std::string()) + "/" + r.value("op", std::string()) + "/" +
                                       r.value("size_bytes", json(0)).dump());
    clash = clash || !seen.insert(k).second;
  }
  // Seeds first: "static seed=2" keeps the ratio comparison per seed; any other difference, the folder name.
  if (clash) {
    seen.clear();
    clash = false;
    for (const auto& r : rows) {
      const std::string label = r["routing"].get<std::string>() + " seed=" + r["seed"].dump();
      clash = clash || !seen.insert({r["oversubscription"].get<std::string>(), label,
                                     r.value("job", std::string()) + "/" + r.value("op", std::string()) +
                                         "/" + r.value("size_bytes", json(0)).dump()})
                            .second;
    }
    for (auto& r : rows)
      r["routing"] = clash ? r["point"] : json(r["routing"].get<std::string>() + " seed=" + r["seed"].dump());
  }
  if (engines.size() > 1) { // the points ran on different engines: none of them is "the" engine
    std::string all;
    for (const auto& e : engines) all += (all.empty() ? "" : ", ") + e;
    manifest["engine"] = "mixed (" + all + ")";
  }
  ReportInput out;
  out.path = (fs::path(dir) / "points").string();
  out.doc = {{"manifest", manifest}, {"rows", rows}};
  return out;
}

} // namespace

ReportInput load_report_input(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file = path;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(file / "plan.json", ec))
      file /= "plan.json";
    else if (fs::exists(file / "whatif.json", ec))
      file /= "whatif.json";
    else if (fs::exists(file / "results.json", ec))
      file /= "results.json";
    else if (fs::is_directory(file / "points", ec))
      return load_sweep_folder(file.string());
    else
      throw InputError(path +
                       ": none of plan.json, whatif.json, results.json or points/ (a sweep) in this folder");
  } else if (!fs::exists(path, ec)) {
    throw InputError(path + ": no such folder or file");
  } else if (file.filename() == "summary.json" && fs::is_directory(file.parent_path() / "points", ec)) {
    // A sweep's summary.json holds no per-point data the page needs: the sweep is reported by its folder.
    return load_sweep_folder(file.parent_path().string());
  }
  ReportInput r;
  r.path = file.string();
  r.doc = parse_json_text(read_file(r.path), r.path); // file:line:col, numbers past a double, nesting
  return r;
}

} // namespace ibn::analysis
