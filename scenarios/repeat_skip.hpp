#pragma once
// Repeat skips (packet.fast_forward; docs/engine.md "Repeat skips"): a job that runs the same collective
// again and again on an engine where nothing is random (no jitter, noise, variability, bit errors, CC, ...)
// repeats itself exactly once the network's state at the end of one execution is the state at the end of
// the one before: the next execution then starts from the same state and, the engine being deterministic,
// takes the same time and leaves the same state again. The runner tells RepeatSkip the end and duration of
// every execution of an entry; once three executions in a row took the same time to the picosecond with the
// same spacing between their ends (the state at their ends repeating), it asks the engine to skip the
// remaining executions as periods (eng::Engine::skip_periods: the clock moves on by n periods, the counters
// grow by n periods' worth) and the runner records the skipped executions' samples, equal to the last one.
// The engine is marked at the end of every execution (eng::Engine::mark_period), so only a job whose
// executor does not mark within executions (no period skips of its own) uses it.
#include "models/engine.hpp"
#include "sim/time.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>

namespace ibn::scen {

class RepeatSkip {
 public:
  /// Executions in a row that must agree (duration, and spacing from the previous end) before a skip.
  static constexpr int kEqualRuns = 3;

  /// Execution of `entry` ended at `end` (engine time) after `duration`; `remaining` more executions of the
  /// same entry follow. Returns how many of them the engine skipped (0: none; the caller runs the next).
  std::uint32_t on_done(eng::Engine& engine, std::size_t entry, Time end, Time duration,
                        std::uint32_t remaining) {
    if (entry != entry_) {
      entry_ = entry;
      equal_ = 1;
      spacing_ = Time::max();
    } else {
      const Time spacing = end - last_end_;
      equal_ = duration == duration_ && (spacing == spacing_ || equal_ == 1) ? equal_ + 1 : 1;
      spacing_ = spacing;
    }
    duration_ = duration;
    last_end_ = end;
    // (Not past half the clock's range: the runner refuses iterations that would start there, and a skip
    // must not carry the clock beyond what it would have refused.)
    const bool fits = spacing_ > Time::zero() &&
                      remaining <= (Time::max().count_ps() / 2 - end.count_ps()) / spacing_.count_ps();
    if (equal_ >= kEqualRuns && marked_ && remaining > 0 && fits && engine.skip_periods(remaining)) {
      marked_ = false;
      entry_ = std::numeric_limits<std::size_t>::max(); // the entry is done
      ++skips_;
      skipped_ += remaining;
      return remaining;
    }
    marked_ = remaining > 0 && engine.mark_period();
    return 0;
  }
  std::uint64_t skips() const { return skips_; }
  std::uint64_t skipped() const { return skipped_; }

 private:
  std::size_t entry_ = std::numeric_limits<std::size_t>::max();
  int equal_ = 0;
  Time duration_, last_end_, spacing_ = Time::max();
  bool marked_ = false;
  std::uint64_t skips_ = 0, skipped_ = 0;
};

} // namespace ibn::scen
