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
//
// Import, in detail
// - Nodes. A switch or router is one node (radix: the header's port count, e.g. "Switch 36"; in the ports
//   format, or when a peer line names a higher port, the highest port number seen). A channel adapter becomes
//   one node per cabled CA port, radix 1, always cabled on its port 1 (our convention); a CA port "[2]" in
//   the file is port 1 of its own node, and a dual-port card with both ports cabled is two nodes of one host.
//   The CA port number itself is not kept (the Fabric has no field for it). Every device seen gets at least
//   one node, even when none of its ports is cabled (e.g. a switch that only appears in "???" lines).
// - Kinds: "S-"/SW switch, "R-"/RT router, "H-"/CA adapter; a CA whose description contains "Aggregation
//   Node" (SHARP) is an Aggregator (tier 0, no host). A peer that never gets its own block is created from
//   the port lines naming it (kind from its id prefix); one summary warning counts such nodes.
// - Names: the trimmed NodeDescription when unique (an empty one: the id, "S-<guid>"); otherwise " (<guid>)"
//   is appended, then " port <P>" when the clash is between ports of one CA, then " #2", " #3"...
//   (e.g. "tank1 mlx4_0 (0xf452140300081a20) port 2"). `description` keeps the NodeDescription.
// - Hosts: HCA nodes whose descriptions start with the same word (the server: "stage97 mlx4_0" -> stage97)
//   share a `host` index, numbered in node order. Default adapter descriptions ("MT4099 ...", "... Mellanox
//   Technologies") name no server: such a CA is a host of its own.
// - GUIDs: the node GUID from the id; a redacted/unparsable GUID ("S-9c05<redacted>") gives guid 0, and
//   nodes sharing such an id are told apart by their description. LIDs: the switch's port-0 LID, the CA
//   port's LID.
// - Cables: each cable is listed from both ends; the second sighting is dropped (a different speed on the
//   two ends is a warning, the first one wins). A port reported cabled to two different peers (the same CA
//   port on two switch ports) is a warning; the extra cable is kept on a second node for that port.
//   Speeds come from the file ("4xQDR", "4x EDR", "2xNDR"); a degraded cable keeps its own speed. The file
//   has no lengths: HCA cables are taken as 3 m DAC, switch-to-switch cables as 30 m fibre (unless the
//   exporter's annotations below give them).
//   Unconnected ports ("???", or no peer in the ports format) are not cables; a cable from a port to
//   itself is dropped with a warning.
// - Tiers: HCAs and aggregators 0. Leaves (tier 1) are switches with HCA cables, except a switch with more
//   switch cables than HCA cables that is cabled to such a leaf: it acts as a spine and is placed, with a
//   warning naming it, like the other switches: 1 + its distance in switch hops to the nearest leaf.
//   Switches without any path to an HCA get tier 1 and one warning.
// - A disconnected fabric loads with a warning giving the number of connected components; the importer
//   does not call Fabric::validate() (it throws on that), the other invariants hold by construction.
// - Line classification. Blank lines end a block; '#' lines are comments; "...omitted", "...", "[...]",
//   "<snip>" mark truncation (warning, the block ends). Outside a block, any line that is neither a
//   vendid=/devid=/...guid= line, a "Switch|Ca|Rt <n>" header nor a ports-format "CA|SW|RT <lid> ..." line
//   is prose around the output and ignored (port lines there are counted in one warning). Inside a block,
//   a shell prompt ("user@host:~$ ...") or a markdown fence ("```") ends the block as prose; any other
//   line that is not a port line is InputError "FILE:LINE: cannot parse ...". A header, port line or
//   ports-format line that starts like one but does not parse is an InputError naming the line, as is an
//   unknown speed ("4xZZZ"); except that a malformed last line without a newline (a file cut off mid-line)
//   is only a warning. Empty input, or input without any topology, is an InputError naming the source.
//
// Export writes the default text format: a header comment, then per device "sysimgguid=", "switchguid=" /
// "caguid=" / "rtguid=", the "Switch"/"Ca"/"Rt" header with "S-<16 hex>"/"H-..."/"R-..." ids, and one port
// line per cabled port with the peer's id, port, description, LID and speed (switches in switch style, CAs
// and routers in CA style "[p](portguid) ... # lid L lmc 0 ..."). HCA/aggregator nodes sharing a GUID are
// exported as the ports 1..k of one CA. A device without a GUID (or with one an earlier device already
// uses) gets a synthetic GUID 0x02000000000000xx (locally administered, never a vendor's). Each block is
// preceded by "# ibnetsim-node: port=P kind=... name=\"...\" description=\"...\" tier= host= plane= group=
// guid=0x... switch_model=\"...\" cables=\"P:LEN:MEDIUM ...\"" comment lines carrying what the format cannot
// express; the importer applies them (so import(export(f)) keeps names, GUIDs including 0, kinds, tiers,
// hosts, planes, groups, switch radix, switch models (written for switches and routers, "" = none, then not
// inferred), and the cables with their ports, speeds, lengths and media (`cables`: per cabled port, by the
// port number of the port lines; either end's entry is used)), other readers skip them as comments. Not
// kept: an HCA node's radix above 1 (each port comes back as a node of its own).
#include "topology/fabric.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace ibn::topo {

struct ImportResult {
  Fabric fabric;
  std::vector<std::string> warnings; ///< each "FILE:LINE: text" or "FILE: text"
  /// "FILE: text": what was inferred, not a problem (switch models read from the descriptions, or that
  /// none could be; topology/switch_models.hpp).
  std::vector<std::string> notes;
};

ImportResult import_ibnetdiscover(std::istream& in, const std::string& source);
ImportResult import_ibnetdiscover_file(const std::string& path);

/// Writes the default (non -p) text format; import_ibnetdiscover() reads it back to an equal fabric
/// (same nodes, names, GUIDs, ports, speeds).
void export_ibnetdiscover(const Fabric& f, std::ostream& out);

} // namespace ibn::topo
