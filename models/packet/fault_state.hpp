#pragma once
// The packet engine's fault state (faults.cpp), complete here for the files that construct or destroy a Core.
#include "models/packet/faults.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace ibn::pkt::detail {

struct FaultTimer; // faults.cpp

struct FaultState {
  FaultConfig cfg;
  FaultTimer* timer = nullptr;
  std::vector<bool> down;                            // per LinkId
  std::vector<std::array<std::uint32_t, 2>> link_tx; // per LinkId: its two Tx (kNil when not simulated)
  std::vector<QpFailure> failures;
  FaultStats stats;
  bool armed = false; // fault_state() ran: shortcuts off, timer and link maps made
};

} // namespace ibn::pkt::detail
