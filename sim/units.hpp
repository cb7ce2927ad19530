#pragma once
// Parsing of user-facing quantities (sizes, rates, lengths) into integer base units.
//
// Sizes are binary: "64K" == "64KiB" == 65536 bytes, "1M" == 1 MiB, "1G" == 1 GiB (as perftest and
// nccl-tests read them). Plain rates: "200Gbps", "200Gb/s", "400G" -> bits per second.
// Every parser throws InputError naming `what` (the flag or key) and the offending text.
#include <cstdint>
#include <string>
#include <string_view>

namespace ibn {

/// Parses a byte count: "4096", "64K", "64KiB", "1M", "1MiB", "1G", "2GiB". Negative or empty -> InputError.
std::uint64_t parse_size_bytes(std::string_view text, const std::string& what);

/// Parses a plain numeric rate: "200Gbps", "200Gb/s", "200G", "100000Mbps" -> bits per second.
std::uint64_t parse_plain_rate_bps(std::string_view text, const std::string& what);

/// Parses a non-negative decimal number (e.g. a cable length in metres); rejects trailing garbage.
double parse_nonneg_double(std::string_view text, const std::string& what);

/// Parses a positive integer; rejects signs, fractions and trailing garbage.
std::int64_t parse_positive_int(std::string_view text, const std::string& what);

/// Formats a byte count the way a person reads it: 65536 -> "64KiB", 1000 -> "1000B".
std::string format_size(std::uint64_t bytes);

/// A number as printf's %g writes it (6 significant digits): 1e-07, 250, 0.125.
std::string format_g(double v);

} // namespace ibn
