// Chrome/Perfetto trace writer. See trace.hpp for the format and the rounding rule.
#include "analysis/trace.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

namespace ibn::analysis {
namespace {

constexpr std::int64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};

/// Picoseconds rounded (half away from zero) to a multiple of 10^(6 - decimals) ps.
std::int64_t round_ps(std::int64_t ps, int decimals) {
  const std::int64_t q = kPow10[6 - decimals];
  const std::int64_t mag = ps < 0 ? -ps : ps;
  const std::int64_t r = (mag + q / 2) / q * q;
  return ps < 0 ? -r : r;
}

/// A picosecond count that is already a multiple of 10^(6 - decimals), printed in microseconds.
std::string ps_as_us(std::int64_t ps, int decimals) {
  std::string out;
  if (ps < 0) {
    out += '-';
    ps = -ps;
  }
  out += std::to_string(ps / 1000000);
  if (decimals > 0) {
    std::string frac = std::to_string(ps % 1000000);
    frac.insert(0, 6 - frac.size(), '0');
    out += '.';
    out += frac.substr(0, static_cast<std::size_t>(decimals));
  }
  return out;
}

void check_decimals(int decimals) {
  if (decimals < 0 || decimals > 6)
    throw InputError("trace time_decimals: " + std::to_string(decimals) + " is outside 0..6");
}

std::string span_label(const TraceSpan& s) {
  return "trace span '" + s.name + "' (job " + std::to_string(s.job) + ", rank " + std::to_string(s.rank) +
         ")";
}

} // namespace

std::string format_trace_us(Time t, int decimals) {
  check_decimals(decimals);
  return ps_as_us(round_ps(t.count_ps(), decimals), decimals);
}

std::string render_chrome_trace(const std::vector<TraceSpan>& spans, const TraceOptions& options) {
  check_decimals(options.time_decimals);
  const int d = options.time_decimals;
  for (const auto& s : spans) {
    if (s.name.empty())
      throw InputError("trace span (job " + std::to_string(s.job) + ", rank " + std::to_string(s.rank) +
                       "): empty name");
    if (s.end < s.start) throw InputError(span_label(s) + ": end is before start");
    if (!s.args.is_null() && !s.args.is_object())
      throw InputError(span_label(s) + ": args must be an object");
  }
  std::vector<std::size_t> order(spans.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = spans[a];
    const auto& y = spans[b];
    return std::tie(x.job, x.rank, x.start, x.end) < std::tie(y.job, y.rank, y.start, y.end);
  });

  std::set<std::uint32_t> jobs;
  std::set<std::pair<std::uint32_t, std::uint32_t>> threads;
  for (const auto& s : spans) {
    jobs.insert(s.job);
    threads.insert({s.job, s.rank});
  }
  for (const auto& [job, name] : options.job_names) jobs.insert(job);

  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  auto event = [&](const std::string& body) {
    out += first ? "\n" : ",\n";
    first = false;
    out += body;
  };
  for (const auto job : jobs) {
    const auto it = options.job_names.find(job);
    const std::string name = it != options.job_names.end() ? it->second : "job " + std::to_string(job);
    event(nlohmann::json{
        {"ph", "M"}, {"name", "process_name"}, {"pid", job}, {"tid", 0}, {"args", {{"name", name}}}}
              .dump());
    event(nlohmann::json{{"ph", "M"},
                         {"name", "process_sort_index"},
                         {"pid", job},
                         {"tid", 0},
                         {"args", {{"sort_index", job}}}}
              .dump());
  }
  for (const auto& [job, rank] : threads) {
    event(nlohmann::json{{"ph", "M"},
                         {"name", "thread_name"},
                         {"pid", job},
                         {"tid", rank},
                         {"args", {{"name", "rank " + std::to_string(rank)}}}}
              .dump());
    event(nlohmann::json{{"ph", "M"},
                         {"name", "thread_sort_index"},
                         {"pid", job},
                         {"tid", rank},
                         {"args", {{"sort_index", rank}}}}
              .dump());
  }
  for (const auto i : order) {
    const auto& s = spans[i];
    const std::int64_t ts = round_ps(s.start.count_ps(), d);
    const std::int64_t te = round_ps(s.end.count_ps(), d);
    std::string e = "{\"ph\":\"X\",\"name\":" + nlohmann::json(s.name).dump() +
                    ",\"pid\":" + std::to_string(s.job) + ",\"tid\":" + std::to_string(s.rank) +
                    ",\"ts\":" + ps_as_us(ts, d) + ",\"dur\":" + ps_as_us(te - ts, d);
    if (s.args.is_object()) e += ",\"args\":" + s.args.dump();
    e += "}";
    event(e);
  }
  out += "\n]}\n";
  return out;
}

} // namespace ibn::analysis
