#pragma once
// Chrome / Perfetto trace writer: turns a list of spans (one collective step on one rank) into the JSON
// object format that chrome://tracing and ui.perfetto.dev open.
//
// Output: {"displayTimeUnit":"ns","traceEvents":[metadata..., complete events...]}. Each span becomes one
// complete event (ph "X") with pid = job and tid = rank; ts and dur are microseconds written with a fixed
// number of decimals (rounded from integer picoseconds, half up). dur is the rounded end minus the rounded
// start, so ts + dur is exactly the rounded end and nested spans stay nested after rounding. Metadata
// events (ph "M") name every process ("job N" or the given name) and thread ("rank N") and fix their
// sort order. The output is deterministic: spans are ordered by (job, rank, start, end) and keep the input
// order on ties; args objects are written with sorted keys.
#include "sim/time.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ibn::analysis {

/// One interval of work on one rank of one job (a collective step, a send, a reduction).
struct TraceSpan {
  std::string name;
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  Time start;
  Time end;
  nlohmann::json args; ///< object shown in the trace viewer's details pane; null = none
};

struct TraceOptions {
  /// Decimals of ts/dur (microseconds): 3 = nanosecond resolution, 6 = picosecond (exact). Range 0..6.
  int time_decimals = 3;
  /// Display names of jobs (pid); a job not listed is called "job N".
  std::map<std::uint32_t, std::string> job_names;
};

/// Renders the spans as a Chrome/Perfetto JSON trace. A span whose end is before its start, a span with an
/// empty name, args that are neither null nor an object, or time_decimals outside 0..6 -> InputError.
std::string render_chrome_trace(const std::vector<TraceSpan>& spans, const TraceOptions& options = {});

/// Formats `t` in microseconds with `decimals` (0..6) fixed decimals, rounding half up on the picosecond
/// count.
std::string format_trace_us(Time t, int decimals);

} // namespace ibn::analysis
