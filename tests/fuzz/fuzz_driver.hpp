#pragma once
// In-suite mutation fuzzing (docs/robustness.md): every fuzz target of fuzz/targets.hpp gets its seed
// corpus, its regression inputs (tests/data/fuzz-regressions/<target>/) and a fixed number of mutated
// inputs from a fixed seed, so a run is the same on every machine. A finding is any exception other than
// InputError, or one input taking longer than the per-case limit; it is written to the build folder so it
// can be added to tests/data/fuzz-regressions/.
#include "fuzz/targets.hpp"
#include "sim/error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ibn::fuzz::test {

/// splitmix64: a fully specified generator (std::uniform_int_distribution is not the same everywhere).
class Rng {
public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }

private:
  std::uint64_t s_;
};

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Files of the target's seed folders (sorted, so the corpus order is fixed) plus its inline seeds.
inline std::vector<std::string> seeds_of(const Target& t) {
  std::vector<std::string> out(t.inline_seeds.begin(), t.inline_seeds.end());
  for (const auto& dir : t.seed_dirs) {
    const auto d = std::filesystem::path(IBNETSIM_SOURCE_DIR) / dir;
    if (!std::filesystem::is_directory(d)) continue;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(d))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out.push_back(read_bytes(f));
  }
  if (out.empty()) out.emplace_back();
  return out;
}

/// Tokens that have broken parsers before: overflow, signs, non-UTF-8, structure, separators.
inline const std::array<std::string, 24>& tokens() {
  static const std::array<std::string, 24> t = {
      "1e309", "-1", "0", "99999999999999999999", "4294967296", "2147483648", "-0", "NaN", "\xff", "\xc3",
      "\"", "{", "}", "[", "]", ",", ":", "=", "\n", "lid 65536", "1:1:1", "1T", "1e308", "0x"};
  return t;
}

/// One mutation of `s` (byte edits, token insertions, range deletes/duplicates, splices from `other`).
inline void mutate(std::string& s, const std::string& other, Rng& r) {
  const std::size_t n = s.size();
  switch (r.below(9)) {
  case 0: // flip a bit
    if (n) s[r.below(n)] ^= static_cast<char>(1u << r.below(8));
    break;
  case 1: // set a byte
    if (n) s[r.below(n)] = static_cast<char>(r.below(256));
    break;
  case 2: // insert a token
    s.insert(r.below(n + 1), tokens()[r.below(tokens().size())]);
    break;
  case 3: { // replace a run of digits by a token
    const std::size_t at = r.below(n + 1);
    std::size_t b = at;
    while (b < n && !std::isdigit(static_cast<unsigned char>(s[b]))) ++b;
    std::size_t e = b;
    while (e < n && (std::isdigit(static_cast<unsigned char>(s[e])) || s[e] == '.')) ++e;
    s.replace(b, e - b, tokens()[r.below(tokens().size())]);
    break;
  }
  case 4: { // delete a range
    if (!n) break;
    const std::size_t a = r.below(n);
    s.erase(a, 1 + r.below(std::min<std::size_t>(64, n - a)));
    break;
  }
  case 5: { // duplicate a range
    if (!n) break;
    const std::size_t a = r.below(n), len = 1 + r.below(std::min<std::size_t>(256, n - a));
    s.insert(r.below(n + 1), s.substr(a, len));
    break;
  }
  case 6: { // splice a piece of another seed
    if (other.empty()) break;
    const std::size_t a = r.below(other.size()), len = 1 + r.below(std::min<std::size_t>(512, other.size() - a));
    s.insert(r.below(n + 1), other.substr(a, len));
    break;
  }
  case 7: // truncate
    if (n) s.resize(r.below(n));
    break;
  default: { // swap two lines' worth of bytes: copy a line over another
    if (!n) break;
    const std::size_t a = r.below(n), b = r.below(n);
    const std::size_t ea = std::min(n, s.find('\n', a) == std::string::npos ? n : s.find('\n', a));
    s.replace(b, 0, s.substr(a, ea - a));
    break;
  }
  }
  if (s.size() > 1 << 20) s.resize(1 << 20); // keep cases small
}

struct Finding {
  std::string target, what, file;
};

/// Runs one input; returns a finding (empty what = fine).
inline Finding run_one(const Target& t, const std::string& input, double max_case_s) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string what;
  try {
    t.run(input);
  } catch (const std::exception& e) {
    what = std::string("exception other than InputError: ") + e.what();
  } catch (...) {
    what = "unknown exception";
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (what.empty() && s > max_case_s) what = "slow input: " + std::to_string(s) + " s";
  return {t.name, what, {}};
}

/// Writes a finding's input where a developer can pick it up for tests/data/fuzz-regressions/.
inline std::string save_finding(const Target& t, const std::string& input, std::size_t index) {
  const auto dir = std::filesystem::temp_directory_path() / "ibnetsim-fuzz-findings" / t.name;
  std::filesystem::create_directories(dir);
  const auto p = dir / (index == static_cast<std::size_t>(-1) ? std::string("current") : "case-" + std::to_string(index));
  std::ofstream(p, std::ios::binary) << input;
  return p.string();
}

/// Seeds, regressions, then `cases` mutated inputs. Returns the number of inputs run.
inline std::size_t fuzz_target(const Target& t, std::size_t cases, std::uint64_t seed, double max_case_s) {
  const auto corpus = seeds_of(t);
  std::size_t run = 0;
  // IBNETSIM_FUZZ_SAVE_CURRENT=1: each input is written before it runs, so a crash (a signal) leaves it in
  // $TMPDIR/ibnetsim-fuzz-findings/<target>/current.
  const bool save_current = std::getenv("IBNETSIM_FUZZ_SAVE_CURRENT") != nullptr;
  auto check = [&](const std::string& input, std::size_t index) {
    ++run;
    if (save_current) save_finding(t, input, static_cast<std::size_t>(-1));
    auto f = run_one(t, input, max_case_s);
    if (!f.what.empty()) {
      const auto file = save_finding(t, input, index);
      FAIL_CHECK(std::string(t.name) << " input " << index << " (saved as " << file << "): " << f.what);
    }
  };
  for (std::size_t i = 0; i < corpus.size(); ++i) check(corpus[i], i);
  Rng r(seed);
  for (std::size_t c = 0; c < cases; ++c) {
    std::string s = corpus[r.below(corpus.size())];
    const std::string& other = corpus[r.below(corpus.size())];
    const std::size_t edits = 1 + r.below(4);
    for (std::size_t e = 0; e < edits; ++e) mutate(s, other, r);
    check(s, corpus.size() + c);
  }
  return run;
}

/// IBNETSIM_FUZZ_CASES overrides the number of mutated inputs per target (e.g. for a longer local run).
inline std::size_t cases_from_env(std::size_t dflt) {
  if (const char* e = std::getenv("IBNETSIM_FUZZ_CASES"); e && *e) return static_cast<std::size_t>(std::atoll(e));
  return dflt;
}

} // namespace ibn::fuzz::test
