#include "scenarios/resource_estimate.hpp"

#include "scenarios/collectives.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ibn::scen {
namespace {

std::string sci(double v) {
  char buf[64];
  if (v < 1e6) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

} // namespace

double max_events_limit() {
  const char* env = std::getenv("IBNETSIM_MAX_EVENTS");
  if (!env || !*env) return kDefaultMaxEvents;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  if (end == env || *end != '\0' || !std::isfinite(v) || v <= 0)
    throw InputError(std::string("environment variable IBNETSIM_MAX_EVENTS: cannot read '") + env +
                     "' (expected a positive number such as 1e12)");
  return v;
}

RunEstimate estimate_run(const Scenario& s, const World& w, const std::string& engine) {
  RunEstimate e;
  const double mtu = std::max<double>(256, w.packet.mtu_bytes);
  const double hops = 2.0 * std::max(1, w.fabric.max_tier()) + 1.0;
  for (const auto& j : s.jobs) {
    if (!j.workload.trace.empty()) continue; // a replayed trace is read by the runner itself
    const double n = static_cast<double>(j.nodes) * j.gpus_per_node;
    const double reps = static_cast<double>(j.workload.warmup) + j.workload.iterations;
    const double channels = j.workload.channels ? j.workload.channels : std::min(32.0, 2.0 * j.nics_per_node);
    e.max_ranks = std::max(e.max_ranks, n);
    for (const auto size : j.workload.sizes_bytes) {
      const double S = static_cast<double>(size);
      const double bytes = 2.0 * S * n;
      e.collectives += reps;
      e.network_bytes += reps * bytes;
      e.packets += reps * std::ceil(bytes / mtu);
      // A DAG beyond kMaxTransfers is refused by build_collective itself (with advice on chunk_bytes).
      const double per_call = n * (2.0 * std::max(0.0, n - 1) * channels + std::ceil(2.0 * S / 262144.0));
      e.transfers += reps * std::min(per_call, static_cast<double>(kMaxTransfers));
    }
  }
  e.events = engine == "flow" ? 4.0 * e.transfers : 3.0 * hops * e.packets;
  return e;
}

void check_run_resources(const Scenario& s, const World& w, const RunOptions& opt) {
  const std::string engine = to_string(opt.engine.value_or(s.engine));
  const RunEstimate e = estimate_run(s, w, engine);
  const double limit = max_events_limit();
  const std::string what = sci(e.collectives) + " collectives, up to " + sci(e.max_ranks) + " ranks, ~" +
                           sci(e.network_bytes) + " network bytes (" + sci(e.packets) + " packets), ~" +
                           sci(e.events) + " " + engine + "-engine events";
  if (e.events > limit)
    throw InputError(s.file + ": the run is too large: " + what + ", more than the limit of " + sci(limit) +
                     " events (fewer or smaller sizes, fewer iterations or ranks; or raise the limit with the " +
                     "environment variable IBNETSIM_MAX_EVENTS, e.g. IBNETSIM_MAX_EVENTS=" + sci(e.events * 2) +
                     ")");
  if (opt.progress) opt.progress("estimate: " + what);
}

} // namespace ibn::scen
