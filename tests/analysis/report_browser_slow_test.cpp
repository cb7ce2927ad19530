// The reports in a real browser: headless Chromium (Debian package `chromium`) loads a plan report and a
// what-if report, takes a screenshot of the first screen, and prints the rendered DOM. The test checks the
// page rendered (a screenshot of real content, not a blank page), that the headline is in the rendered page,
// and that the browser logged no console message (the pages have no scripts, so any console line is an
// error such as a failed resource). A page that does log to the console proves the check can fail.
#include "analysis/report.hpp"

#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string chromium() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (fs::exists(c)) return c;
  return "";
}

struct Browsed {
  int rc = -1;
  std::string dom, log;
  std::uintmax_t png_bytes = 0;
  int png_width = 0, png_height = 0;
};

Browsed browse(const std::string& html_path, const std::string& png_path) {
  const std::string exe = chromium();
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 "
      "--window-size=1300,1000 ";
  const std::string log = png_path + ".log", dom = png_path + ".dom.html";
  Browsed b;
  b.rc = std::system(
      (exe + flags + "--screenshot=" + png_path + " file://" + html_path + " >/dev/null 2>" + log).c_str());
  std::system((exe + flags + "--dump-dom file://" + html_path + " >" + dom + " 2>>" + log).c_str());
  b.dom = ibn::test::read_text_file(dom);
  b.log = ibn::test::read_text_file(log);
  if (fs::exists(png_path)) {
    b.png_bytes = fs::file_size(png_path);
    const std::string png = ibn::test::read_text_file(png_path);
    if (png.size() > 24 && png.compare(1, 3, "PNG") == 0) {
      auto be32 = [&](std::size_t at) {
        return (static_cast<unsigned char>(png[at]) << 24) | (static_cast<unsigned char>(png[at + 1]) << 16) |
               (static_cast<unsigned char>(png[at + 2]) << 8) | static_cast<unsigned char>(png[at + 3]);
      };
      b.png_width = be32(16);
      b.png_height = be32(20);
    }
  }
  return b;
}

bool console_lines(const std::string& log) {
  return log.find(":CONSOLE") != std::string::npos;
}

json plan_doc() {
  json designs = json::array();
  const double costs[] = {2.9e6, 2.5e6, 2.3e6};
  const double p99s[] = {410.0, 455.0, 720.0};
  const char* ratios[] = {"1:1", "2:1", "4:1"};
  for (int i = 0; i < 3; ++i) {
    json r = {{"allreduce 64MiB",
               {{"op", "allreduce"},
                {"size_bytes", 67108864},
                {"n", 40},
                {"p50_us", p99s[i] * 0.8},
                {"p99_us", p99s[i]},
                {"ci_p50_us", {p99s[i] * 0.78, p99s[i] * 0.82}},
                {"ci_p99_us", {p99s[i] * 0.95, nullptr}},
                {"delta_p99_pct", 100.0 * (p99s[i] / p99s[0] - 1)}}}};
    designs.push_back({{"name", std::string("qm9700-") + ratios[i]},
                       {"ratio", ratios[i]},
                       {"switch", "qm9700"},
                       {"tiers", 2},
                       {"su_nodes", 32},
                       {"leaf_ports", 64 - 8 * i},
                       {"switches", 48 - 4 * i},
                       {"cables", 2048 - 256 * i},
                       {"transceivers", 2048 - 256 * i},
                       {"cost_usd", costs[i]},
                       {"power_w", 60000 - 3000 * i},
                       {"bisection_gbps", 204800.0 / (1 << i)},
                       {"engine", "flow"},
                       {"results", r}});
  }
  return {{"designs", designs},
          {"pareto", {"qm9700-1:1", "qm9700-2:1", "qm9700-4:1"}},
          {"recommendation",
           "2:1 (qm9700-2:1) saves $0.40M (14 %) against 1:1 and costs +11.0 % allreduce 64MiB p99"},
          {"headline_metric", "allreduce 64MiB"},
          {"request", {{"gpus", 1024}, {"gpus_per_node", 8}, {"nic", "NDR"}, {"sizes", {"64M"}}}},
          {"notes", json::array()}};
}

json whatif_doc() {
  json rows = json::array();
  const char* ratios[] = {"1:1", "2:1", "4:1"};
  for (int i = 0; i < 3; ++i)
    for (const char* routing : {"static", "adaptive"}) {
      json samples = json::array();
      for (int k = 0; k < 50; ++k)
        samples.push_back(100.0 * (1 + i) + k * (i + 1) * (routing[0] == 's' ? 2.0 : 1.0));
      rows.push_back(
          {{"oversubscription", ratios[i]},
           {"routing", routing},
           {"cc", "none"},
           {"job", "train"},
           {"op", "allreduce"},
           {"size_bytes", 16777216},
           {"ranks", 128},
           {"iterations", 50},
           {"completion_us",
            {{"p50", 100.0 * (1 + i) + 25 * (i + 1)}, {"p99", 100.0 * (1 + i) + 49 * (i + 1) * 2}}},
           {"busbw_gbps", {{"p50", 300.0 / (1 + i)}}},
           {"samples_us", samples},
           {"links", {{"by_tier", {{{"tier", "leaf->spine"}, {"util_mean", 0.2 * (i + 1)}}}}}}});
    }
  return {{"manifest",
           {{"version", "test"},
            {"engine", "flow"},
            {"seed", 1},
            {"config",
             {{"engine", "packet"}, {"jobs", {{{"name", "train"}, {"workload", {{"sizes", {"16M"}}}}}}}}}}},
          {"rows", rows}};
}

} // namespace

TEST_CASE("reports render in headless Chromium: screenshot, headline, no console messages") {
  REQUIRE_MESSAGE(!chromium().empty(), "headless Chromium is needed: apt-get install chromium");
  const auto dir = fs::temp_directory_path() / "ibnetsim-report-browser";
  fs::remove_all(dir);
  fs::create_directories(dir);

  // A page that logs to the console: the check must see it.
  {
    std::ofstream(dir / "bad.html")
        << "<!DOCTYPE html><html><body><p>x</p><script>console.error('broken');</script>"
           "</body></html>";
    const auto b = browse((dir / "bad.html").string(), (dir / "bad.png").string());
    CHECK(console_lines(b.log));
  }
  struct Page {
    std::string name, html, headline;
  };
  const std::vector<Page> pages = {
      {"plan", ibn::analysis::render_plan_report(plan_doc()), "saves $0.40M (14 %) against 1:1"},
      {"whatif", ibn::analysis::render_report(whatif_doc()), "4:1 costs"}};
  for (const auto& p : pages) {
    CAPTURE(p.name);
    const auto html = dir / (p.name + ".html");
    std::ofstream(html) << p.html;
    const auto png = dir / (p.name + ".png");
    const auto b = browse(html.string(), png.string());
    CHECK(b.rc == 0);
    CHECK(b.png_width == 1300);
    CHECK(b.png_height == 1000);
    CHECK(b.png_bytes > 30000); // a blank 1300x1000 page compresses to a few kB
    CHECK(b.dom.find(p.headline) != std::string::npos);
    CHECK(b.dom.find("class=\"headline\"") != std::string::npos);
    CHECK(b.dom.find("<svg") != std::string::npos);
    CHECK_MESSAGE(!console_lines(b.log), b.log);
    // The first screen answers: the headline comes before any plot and the configuration is last.
    CHECK(b.dom.find("class=\"headline\"") < b.dom.find("<svg"));
    CHECK(b.dom.find("Configuration") > b.dom.find("<svg"));
    MESSAGE("screenshot: " << png.string());
  }
}
