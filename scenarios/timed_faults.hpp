#pragma once
// Faults at t > 0 on the engine of a run (docs/scenarios.md "Faults"): the packet engine's fault API
// (models/packet/faults.hpp) or the flow engine's (models/flow/flow_engine.hpp, "Timed faults"), with the
// scenario's sweep delay, reroute and the device's RC retry limit; and the QPs that exhausted their retries.
#include "models/engine.hpp"
#include "models/packet/config.hpp"
#include "models/packet/faults.hpp"
#include "scenarios/faults.hpp"

#include <string>
#include <vector>

namespace ibn::scen {

/// Configures the engine's faults (sm_sweep_delay_us, reroute; the flow engine also takes
/// device.ack_timeout and retry_count) and schedules every action of `timed`. Returns false, scheduling
/// nothing, when the engine has no fault API. InputError naming `file`'s key faults.reroute when the engine
/// refuses the reroute (adaptive routing on).
bool schedule_timed_faults(eng::Engine& engine, const std::vector<FaultAction>& timed, const FaultSpec& spec,
                           const pkt::PacketConfig& device, const std::string& file);

/// The workload is over: faults not yet due are dropped (the packet engine's RC timers keep its clock going
/// after the last delivery, and a fault then was applied, rerouted and counted). No-op on other engines.
void cancel_pending_faults(eng::Engine& engine);

/// The QPs that exhausted their retries in the run (either engine; empty for others).
std::vector<pkt::QpFailure> qp_failures_of(eng::Engine& engine);

} // namespace ibn::scen
