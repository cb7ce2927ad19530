#pragma once
// ibnetdiscover import and export.
//
// Reads both formats the real tool prints:
//  - default text: blocks of "vendid=/devid=/sysimgguid=/switchguid=|caguid=|rtguid=" lines, a header
//    "Switch 36 \"S-<guid>\" # \"<desc>\" enhanced port 0 lid 128 lmc 0" (or "Ca"/"Rt"), then port lines
//    "[1] \"H-<guid>\"[1](<portguid>) # \"<desc>\" lid 105 4xQDR";
//  - ports format (`ibnetdiscover -p`): "CA 134 1 0x... 4x EDR - SW 1719 10 0x... ( 'a' - 'b' )", with
//    unconnected ports listed without a peer.
// Handles comments, prompts and prose around the output, CRLF, redacted GUIDs ("9c05<redacted>"), SHARP
// aggregation nodes (kind Aggregator, not hosts), routers, mixed speeds, degraded links. A file cut short
// ("...omitted", a block without its ports) loads with a warning naming the line. Tiers are inferred from
// the distance to hosts. Malformed lines raise InputError("FILE:LINE: ...").
#include "topology/fabric.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace ibn::topo {

struct ImportResult {
  Fabric fabric;
  std::vector<std::string> warnings; ///< each "FILE:LINE: text" or "FILE: text"
};

ImportResult import_ibnetdiscover(std::istream& in, const std::string& source);
ImportResult import_ibnetdiscover_file(const std::string& path);

/// Writes the default (non -p) text format; import_ibnetdiscover() reads it back to an equal fabric
/// (same nodes, names, GUIDs, ports, speeds).
void export_ibnetdiscover(const Fabric& f, std::ostream& out);

} // namespace ibn::topo
