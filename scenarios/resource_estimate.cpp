#include "scenarios/resource_estimate.hpp"

#include "scenarios/collectives.hpp"
#include "scenarios/ring_fluid.hpp"
#include "scenarios/ring_shortcut.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <optional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ibn::scen {
bool may_use_symmetric_steps(const Scenario& s, const std::string& engine);
namespace {

std::string sci(double v) {
  char buf[64];
  if (v < 1e6) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

/// A job's collective of `size` bytes as the scenario states it (no placement: no NIC rate, no NCCL costs).
CollectiveSpec job_spec(const Scenario& s, const JobSpec& j, std::uint64_t size) {
  CollectiveSpec cs;
  cs.op = j.workload.op;
  cs.size_bytes = size;
  cs.ranks = j.nodes * j.gpus_per_node;
  cs.gpus_per_node = j.gpus_per_node;
  cs.nics_per_node = j.nics_per_node;
  cs.algorithm = j.workload.algorithm;
  cs.protocol = j.workload.protocol;
  cs.channels = j.workload.channels;
  cs.nvlink_gbps = s.nvlink_gbps;
  return cs;
}

/// Whether the runner will put this scenario's collectives on the ring-fluid model
/// (ScenarioRunner::decide_ring_fluid, before the placement: the NIC rate is the fabric's first HCA's, not
/// the job's own, so on a fabric with mixed NIC rates the tuning's choice, and with it the decision, may
/// differ).
bool may_use_ring_fluid(const Scenario& s, const World& w, const std::string& engine) {
  if (engine != "flow") return false;
  const bool var =
      !effective_variability(s, w.profile && w.profile->variability ? &*w.profile->variability : nullptr)
           .empty();
  const auto blocker = ring_fluid_blocker(s, w, s.adaptive_routing != pkt::ArMode::Off, var, false);
  // The NIC rate (an input of the tuning model) as the runner reads it from a job's first HCA: here the
  // fabric's first HCA.
  double nic_gbps = 0;
  for (std::uint32_t h = 0; h < w.tables->hca_nodes().size() && nic_gbps == 0; ++h)
    nic_gbps = hca_link_gbps(w, h);
  return choose_ring_fluid(s, blocker, may_use_symmetric_steps(s, engine),
                           [&](std::size_t i, std::uint64_t size) {
                             auto cs = job_spec(s, s.jobs[i], size);
                             cs.nccl_version = s.nccl_version;
                             cs.nccl_costs = s.nccl_costs;
                             cs.min_channels = s.nccl_min_channels;
                             cs.max_channels = s.nccl_max_channels;
                             if (nic_gbps > 0) cs.nic_gbps = nic_gbps;
                             return cs;
                           })
      .use;
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

bool may_use_symmetric_steps(const Scenario& s, const std::string& engine) {
  // The runner's conditions that the scenario alone decides (ScenarioRunner::shortcut_engine); the link
  // condition is checked when the job is placed (a fallback then builds the DAG, which kMaxTransfers bounds).
  return engine == "flow" && s.flow_symmetric_steps && s.jobs.size() == 1 && s.background.empty() &&
         s.calibration.empty() && s.max_sim_time_ms <= 0 && s.adaptive_routing == pkt::ArMode::Off &&
         s.jobs[0].workload.trace.empty() && !s.jobs[0].workload.loop &&
         RingShortcut::takes_layout(s.jobs[0].gpus_per_node);
}

RunEstimate estimate_run(const Scenario& s, const World& w, const std::string& engine) {
  RunEstimate e;
  e.ring_fluid = may_use_ring_fluid(s, w, engine);
  const bool shortcut = !e.ring_fluid && may_use_symmetric_steps(s, engine);
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
      if (e.ring_fluid) continue; // counted per call below
      if (shortcut) {
        const auto cs = job_spec(s, j, size);
        std::optional<RingPlan> plan;
        try {
          plan = ring_plan(cs);
        } catch (const InputError&) { // reported with its key when the runner builds the collective
        }
        if (plan) {
          e.shortcut_transfers += reps * static_cast<double>(ring_plan_transfers(*plan));
          continue;
        }
      }
      e.transfers += reps * std::min(per_call, static_cast<double>(kMaxTransfers));
    }
  }
  if (e.ring_fluid)
    e.events = kRingFluidEventsPerCollective * e.collectives;
  else
    e.events = engine == "flow" ? 4.0 * e.transfers + kShortcutEventsPerTransfer * e.shortcut_transfers
                                : 3.0 * hops * e.packets;
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
