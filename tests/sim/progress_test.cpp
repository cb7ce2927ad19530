// sim/progress: the fraction of a point done over its segments, the line printed, and a slot shared with a
// forked child process.
#include "sim/progress.hpp"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

TEST_CASE("progress: fraction over segments, percentage, elapsed and ETA") {
  ibn::ProgressBoard board(2);
  auto& s = board.slot(1);
  CHECK(s.fraction() == 0.0);
  s.runs_total = 4;
  s.runs_done = 1;
  s.run_total = 200;
  s.run_done = 100;
  CHECK(s.fraction() == doctest::Approx((1 + 0.5) / 4)); // (runs_done + run_done / run_total) / runs_total
  s.start_ns = 1'000'000'000;
  // 37.5 % after 30 s: ETA = 30 x (1 - f) / f = 50 s.
  CHECK(ibn::progress_text(s, 31'000'000'000) == "37% (segment 2/4), 30 s elapsed, ETA 50 s");
  s.open_ended = true;
  CHECK(ibn::progress_text(s, 31'000'000'000) ==
        "37% (segment 2/at most 4), 30 s elapsed, ETA 50 s (at the cap)");
  // A resumed point: 1 of the 4 segments was read back from its checkpoint, so the 30 s bought 0.5 / 4 of the
  // work: ETA = 30 x (1 - 0.375) / (0.375 - 0.25) = 150 s (not the 50 s the whole fraction would suggest).
  s.open_ended = false;
  s.runs_resumed = 1;
  CHECK(ibn::progress_text(s, 31'000'000'000) == "37% (segment 2/4), 30 s elapsed, ETA 2 min 30 s");
  s.run_done = 0; // only the read-back segment done: nothing measured here yet
  CHECK(ibn::progress_text(s, 31'000'000'000).find("ETA unknown") != std::string::npos);
  ibn::ProgressSlot fresh;
  fresh.start_ns = 1;
  CHECK(ibn::progress_text(fresh, 2'000'000'001).find("ETA unknown") != std::string::npos);
}

TEST_CASE("progress: a forked child's updates reach the parent, the printer waits, then repeats") {
  ibn::ProgressBoard board(1);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    board.slot(0).run_total = 10;
    board.slot(0).run_done = 7;
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(board.slot(0).fraction() == doctest::Approx(0.7));
  std::vector<std::string> lines;
  ibn::ProgressPrinter printer(
      board, {"p"}, [&](const std::string& l) { lines.push_back(l); }, 0.0, 3600);
  printer.tick();
  CHECK(lines.empty()); // not started
  board.slot(0).start();
  printer.tick();
  printer.tick(); // within the interval: nothing new
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("[p] 70%, ", 0) == 0);
  board.slot(0).finish();
  board.slot(0).printed_ns = 1;
  printer.tick();
  CHECK(lines.size() == 1); // finished: silent
}
