// Chrome/Perfetto trace writer: the JSON parses, has one complete event per span with pid = job and
// tid = rank, metadata names every process and thread, times are fixed-precision microseconds, and the
// output does not depend on the input order of the spans.
#include "analysis/trace.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using ibn::Time;
using ibn::analysis::format_trace_us;
using ibn::analysis::render_chrome_trace;
using ibn::analysis::TraceOptions;
using ibn::analysis::TraceSpan;
using ibn::test::error_of;
using nlohmann::json;

namespace {

std::vector<TraceSpan> sample_spans() {
  return {
      {"allreduce step 1", 0, 1, Time::ps(2'000'000), Time::ps(5'500'000), json{{"bytes", 4096}}},
      {"allreduce step 0", 0, 1, Time::ps(0), Time::ps(2'000'000), json{{"bytes", 4096}, {"peer", 2}}},
      {"allreduce step 0", 0, 0, Time::ps(123'456'789), Time::ps(124'000'000), nullptr},
      {"alltoall", 3, 7, Time::us(10), Time::us(12), json::object()},
  };
}

std::vector<json> events_with_ph(const json& t, const std::string& ph) {
  std::vector<json> out;
  for (const auto& e : t.at("traceEvents"))
    if (e.at("ph") == ph) out.push_back(e);
  return out;
}

} // namespace

TEST_CASE("trace: one X event per span with pid = job, tid = rank, ts/dur in microseconds") {
  const auto spans = sample_spans();
  const json t = json::parse(render_chrome_trace(spans));
  const auto xs = events_with_ph(t, "X");
  REQUIRE(xs.size() == spans.size());
  // Sorted by (job, rank, start): job 0 rank 0, job 0 rank 1 (step 0 then step 1), job 3 rank 7.
  CHECK(xs[0].at("pid") == 0);
  CHECK(xs[0].at("tid") == 0);
  // 123456789 ps = 123.456789 us -> 123.457 with 3 decimals; end 124.000 -> dur = 124.000 - 123.457.
  CHECK(xs[0].at("ts").get<double>() == doctest::Approx(123.457));
  CHECK(xs[0].at("dur").get<double>() == doctest::Approx(0.543));
  CHECK_FALSE(xs[0].contains("args"));
  CHECK(xs[1].at("name") == "allreduce step 0");
  CHECK(xs[1].at("tid") == 1);
  CHECK(xs[1].at("ts").get<double>() == 0.0);
  CHECK(xs[1].at("dur").get<double>() == doctest::Approx(2.0));
  CHECK(xs[1].at("args") == json({{"bytes", 4096}, {"peer", 2}}));
  CHECK(xs[2].at("name") == "allreduce step 1");
  CHECK(xs[2].at("dur").get<double>() == doctest::Approx(3.5));
  CHECK(xs[3].at("pid") == 3);
  CHECK(xs[3].at("tid") == 7);
  CHECK(xs[3].at("ts").get<double>() == doctest::Approx(10.0));
  CHECK(xs[3].at("args") == json::object());
}

TEST_CASE("trace: metadata names every job and every (job, rank) once") {
  TraceOptions opt;
  opt.job_names[3] = "training job";
  const json t = json::parse(render_chrome_trace(sample_spans(), opt));
  std::map<int, std::string> process_names;
  std::set<std::pair<int, int>> threads;
  for (const auto& e : events_with_ph(t, "M")) {
    if (e.at("name") == "process_name") {
      CHECK(process_names.count(e.at("pid").get<int>()) == 0);
      process_names[e.at("pid").get<int>()] = e.at("args").at("name").get<std::string>();
    }
    if (e.at("name") == "thread_name") {
      CHECK(threads.insert({e.at("pid").get<int>(), e.at("tid").get<int>()}).second);
      CHECK(e.at("args").at("name") == "rank " + std::to_string(e.at("tid").get<int>()));
    }
  }
  CHECK(process_names == std::map<int, std::string>{{0, "job 0"}, {3, "training job"}});
  CHECK(threads == std::set<std::pair<int, int>>{{0, 0}, {0, 1}, {3, 7}});
  CHECK(t.at("displayTimeUnit") == "ns");
}

TEST_CASE("trace: fixed precision text, rounding keeps ts + dur equal to the rounded end") {
  CHECK(format_trace_us(Time::ps(1'234'567), 3) == "1.235");
  CHECK(format_trace_us(Time::ps(1'234'567), 6) == "1.234567");
  CHECK(format_trace_us(Time::ps(1'234'567), 0) == "1");
  CHECK(format_trace_us(Time::ps(500), 3) == "0.001"); // half up
  CHECK(format_trace_us(Time::ps(499), 3) == "0.000");
  CHECK(format_trace_us(Time::us(7), 3) == "7.000");
  CHECK(format_trace_us(Time::ps(-1'500'000), 1) == "-1.5");
  // Every ts and dur in the text has exactly 3 decimals.
  const std::string text = render_chrome_trace(sample_spans());
  CHECK(text.find("\"ts\":123.457,\"dur\":0.543") != std::string::npos);
  CHECK(text.find("\"ts\":10.000,\"dur\":2.000") != std::string::npos);
  // Two back-to-back spans whose boundary rounds: the first ends exactly where the second starts.
  const std::vector<TraceSpan> s = {{"a", 0, 0, Time::ps(100), Time::ps(1'000'600), nullptr},
                                    {"b", 0, 0, Time::ps(1'000'600), Time::ps(2'000'400), nullptr}};
  const auto xs = events_with_ph(json::parse(render_chrome_trace(s)), "X");
  REQUIRE(xs.size() == 2);
  const std::string end_a = format_trace_us(Time::ps(1'000'600), 3);
  CHECK(end_a == "1.001");
  // ts(a) + dur(a) == ts(b) in integer nanoseconds (no floating rounding in the comparison).
  auto ns = [](const json& v) { return std::llround(v.get<double>() * 1000); };
  CHECK(ns(xs[0].at("ts")) + ns(xs[0].at("dur")) == ns(xs[1].at("ts")));
}

TEST_CASE("trace: deterministic and independent of the input order") {
  auto spans = sample_spans();
  const std::string a = render_chrome_trace(spans);
  CHECK(render_chrome_trace(spans) == a);
  std::reverse(spans.begin(), spans.end());
  CHECK(render_chrome_trace(spans) == a);
  CHECK(render_chrome_trace({}) == "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n]}\n");
  CHECK(json::parse(render_chrome_trace({})).at("traceEvents").empty());
}

TEST_CASE("trace: bad spans and options are InputErrors naming the span") {
  auto bad = sample_spans();
  bad[1].end = Time::ps(0);
  bad[1].start = Time::ps(10);
  CHECK(error_of([&] {
          render_chrome_trace(bad);
        }).find("'allreduce step 0' (job 0, rank 1): end is before start") != std::string::npos);
  auto unnamed = sample_spans();
  unnamed[0].name = "";
  CHECK(error_of([&] { render_chrome_trace(unnamed); }).find("empty name") != std::string::npos);
  auto args = sample_spans();
  args[0].args = json::array({1, 2});
  CHECK(error_of([&] { render_chrome_trace(args); }).find("args must be an object") != std::string::npos);
  TraceOptions opt;
  opt.time_decimals = 7;
  CHECK(error_of([&] { render_chrome_trace(sample_spans(), opt); }).find("outside 0..6") !=
        std::string::npos);
}
