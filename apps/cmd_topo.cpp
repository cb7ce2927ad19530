// `ibnetsim topo ...`: generate, import, describe and export fabrics (docs/CLI.md, "Topology").
#include "apps/catalog_path.hpp"
#include "apps/commands.hpp"
#include "apps/fabric_loader.hpp"
#include "sim/atomic_file.hpp"
#include "sim/error.hpp"
#include "sim/units.hpp"
#include "topology/bom.hpp"
#include "topology/describe.hpp"
#include "topology/fabric_io.hpp"
#include "topology/generators.hpp"
#include "topology/ibnetdiscover.hpp"
#include "topology/rail_optimized.hpp"
#include "topology/switch_models.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

namespace ibn::app {
namespace {

void emit(const std::string& out_path, const std::string& content) {
  if (out_path == "-") std::cout << content;
  else write_file_atomic(out_path, content);
}

void emit_fabric_json(const topo::Fabric& f, const std::string& out_path) {
  std::ostringstream s;
  topo::save_fabric_json(f, s);
  emit(out_path, s.str());
  if (out_path != "-")
    std::cerr << "wrote " << out_path << ": " << f.num_hosts() << " hosts, " << f.switches().size() << " switches, "
              << f.num_links() << " links\n";
}

struct FatTreeOpts {
  int tiers = 2, radix = 64, rails = 1;
  std::optional<int> leaf_ports;
  std::string hosts, ratios = "1:1", rate = "NDR", cables, out = "-", switch_model;
  std::int64_t max_hosts = topo::kDefaultMaxHosts;
};
struct RailOpts {
  std::int64_t nodes = 32;
  int nics = 8, su_nodes = 32, radix = 64, tiers = 0, pod_sus = 0, planes = 1, ufm_ports = 0;
  std::string ratios = "1:1", rate = "NDR", cables, out = "-", switch_model;
  std::int64_t max_hosts = topo::kDefaultMaxHosts;
};
struct DragonflyOpts {
  std::optional<int> a, p, h, g; ///< not given: filled to a balanced dragonfly
  std::string arrangement = "absolute", rate = "NDR", out = "-", switch_model;
  std::int64_t max_hosts = topo::kDefaultMaxHosts;
};
struct KaryOpts {
  int k = 4, n = 2;
  std::string rate = "NDR", out = "-", switch_model;
  std::int64_t max_hosts = topo::kDefaultMaxHosts;
};

/// An integer flag given explicitly must be at least `min` (0 is never a silent "default").
int at_least(const std::optional<int>& v, int min, const std::string& flag) {
  if (v && *v < min)
    throw InputError(flag + " must be at least " + std::to_string(min) + ", got " + std::to_string(*v) +
                     " (leave the flag out for the default)");
  return v.value_or(0);
}

void check_max_hosts(std::int64_t v) {
  if (v < 1) throw InputError("--max-hosts must be at least 1, got " + std::to_string(v));
}

constexpr const char* kMaxHostsHelp =
    "refuse fabrics with more HCAs or switches than this (resource bound, docs/robustness.md)";
struct IoOpts {
  std::string input, out = "-", format = "json";
  bool json = false;
};

/// --switch-model on every generator (topology/switch_models.hpp).
void add_switch_model_option(CLI::App* c, std::string& v) {
  c->add_option("--switch-model", v,
                "switch model whose port-to-port latency the engines charge: " + topo::switch_model_ids() +
                    " (or a part number: qm9700, sn4600, ...); per tier: leaf=MODEL,spine=MODEL,core=MODEL "
                    "(default: none, the engine's switch_latency_ns)");
}
topo::Fabric with_switch_model(topo::Fabric f, const std::string& model) {
  if (!model.empty()) topo::apply_switch_models(f, model, "--switch-model");
  return f;
}

void add_generate(CLI::App& topo) {
  auto* gen = topo.add_subcommand("generate", "Generate a fabric (fat-tree, rail-optimized, kary-ntree, dragonfly) as JSON.");
  gen->require_subcommand(1);

  auto ft = std::make_shared<FatTreeOpts>();
  auto* c = gen->add_subcommand("fat-tree", "2- or 3-tier fat-tree with any oversubscription per tier.\n"
                                            "Example: ibnetsim topo generate fat-tree --tiers 2 --radix 64 "
                                            "--hosts 1024 --oversubscription 2:1 --leaf-ports 48 --rate NDR -o fabric.json");
  c->add_option("--tiers", ft->tiers, "switch tiers: 2 (leaf/spine) or 3 (leaf/spine/core)")->capture_default_str();
  c->add_option("--radix", ft->radix, "switch ports")->capture_default_str();
  c->add_option("--leaf-ports", ft->leaf_ports, "ports used on each leaf, 2..radix (default: the radix); the rest "
                                                "stay unused");
  c->add_option("--hosts", ft->hosts, "servers (default: the most the tree holds); a partial tree fills leaves in order");
  c->add_option("--oversubscription", ft->ratios, "downlink:uplink bandwidth per tier, leaf first: 2:1 or 2:1,1:1")
      ->capture_default_str();
  c->add_option("--rate", ft->rate, "link rate: EDR, HDR, NDR, XDR, NDR200, 4xHDR, 200Gbps")->capture_default_str();
  c->add_option("--rails", ft->rails, "parallel planes; each host has one HCA per plane")->capture_default_str();
  c->add_option(
      "--cable-m", ft->cables,
      "cable length in metres per tier: host=3,leaf=30,spine=100 (spine: 3 tiers only; <=5 m: DAC)");
  c->add_option("-o,--output", ft->out, "output file ('-' = stdout)")->capture_default_str();
  c->add_option("--max-hosts", ft->max_hosts, kMaxHostsHelp)->capture_default_str();
  add_switch_model_option(c, ft->switch_model);
  c->callback([ft] {
    topo::FatTreeParams p;
    p.tiers = ft->tiers;
    p.radix = ft->radix;
    p.leaf_ports = ft->leaf_ports;
    check_max_hosts(ft->max_hosts);
    p.max_hosts = ft->max_hosts;
    if (!ft->hosts.empty()) p.hosts = parse_positive_int(ft->hosts, "--hosts");
    p.oversubscription = topo::parse_ratios(ft->ratios, "--oversubscription");
    p.rails = ft->rails;
    p.speed = topo::parse_link_speed(ft->rate, "--rate");
    if (!ft->cables.empty()) p.cables = topo::parse_cable_lengths(ft->cables, "--cable-m");
    emit_fabric_json(with_switch_model(topo::build_fat_tree(p), ft->switch_model), ft->out);
  });

  auto ro = std::make_shared<RailOpts>();
  c = gen->add_subcommand("rail-optimized",
                          "Rail-optimized fat-tree (DGX SuperPOD layout): scalable units of --su-nodes nodes, NIC i of "
                          "every node of an SU on leaf i of that SU, spines above, a core layer above pods of SUs "
                          "for 3 tiers.\n"
                          "Example: ibnetsim topo generate rail-optimized --nodes 127 --nics-per-node 8 --su-nodes 32 "
                          "--ufm-ports 4 --rate NDR -o superpod-h100.json");
  c->add_option("--nodes", ro->nodes, "servers (GPU nodes)")->capture_default_str();
  c->add_option("--nics-per-node", ro->nics, "NICs (rails) per node; one leaf per rail in every SU")
      ->capture_default_str();
  c->add_option("--su-nodes", ro->su_nodes, "node slots per scalable unit (= leaf down-ports)")->capture_default_str();
  c->add_option("--radix", ro->radix, "switch ports")->capture_default_str();
  c->add_option("--tiers", ro->tiers, "2 or 3 (default: 2 when the spines take every leaf, else 3)");
  c->add_option("--oversubscription", ro->ratios, "downlink:uplink per tier, leaf first: 2:1 or 1:1,2:1")
      ->capture_default_str();
  c->add_option("--pod-sus", ro->pod_sus, "3 tiers: SUs per pod under one set of spines (default: spine "
                                         "down-ports / NICs per node)");
  c->add_option("--planes", ro->planes, "copies of the switch fabric (multi-plane); a NIC has a port in each")
      ->capture_default_str();
  c->add_option("--ufm-ports", ro->ufm_ports, "UFM appliance ports cabled into the first free node slot")
      ->capture_default_str();
  c->add_option("--rate", ro->rate, "link rate: HDR, NDR, XDR, NDR200, 400Gbps")->capture_default_str();
  c->add_option(
      "--cable-m", ro->cables,
      "cable length in metres per tier: host=3,leaf=30,spine=100 (spine: 3 tiers only; <=5 m: DAC)");
  c->add_option("--max-hosts", ro->max_hosts, kMaxHostsHelp)->capture_default_str();
  c->add_option("-o,--output", ro->out, "output file ('-' = stdout)")->capture_default_str();
  add_switch_model_option(c, ro->switch_model);
  c->callback([ro, c] {
    topo::RailOptimizedParams p;
    if (c->count("--pod-sus") && ro->pod_sus < 1)
      throw InputError("--pod-sus: " + std::to_string(ro->pod_sus) +
                       " (at least 1; leave it out for the default)");
    if (c->count("--tiers") && ro->tiers != 2 && ro->tiers != 3)
      throw InputError("--tiers: " + std::to_string(ro->tiers) + " (expected 2 or 3)");
    if (ro->nodes < 1) throw InputError("--nodes must be at least 1, got " + std::to_string(ro->nodes));
    p.nodes = ro->nodes;
    p.nics_per_node = ro->nics;
    p.su_nodes = ro->su_nodes;
    p.radix = ro->radix;
    if (ro->tiers != 0) p.tiers = ro->tiers;
    p.oversubscription = topo::parse_ratios(ro->ratios, "--oversubscription");
    if (ro->pod_sus != 0) p.pod_sus = ro->pod_sus;
    p.planes = ro->planes;
    p.ufm_ports = ro->ufm_ports;
    p.speed = topo::parse_link_speed(ro->rate, "--rate");
    if (!ro->cables.empty()) p.cables = topo::parse_cable_lengths(ro->cables, "--cable-m");
    check_max_hosts(ro->max_hosts);
    p.max_hosts = ro->max_hosts;
    emit_fabric_json(with_switch_model(topo::build_rail_optimized(p), ro->switch_model), ro->out);
    // The UFM appliance is cabled into a node slot of the last SU: with every SU full of nodes it opens an
    // SU of its own. Say so (the fabric is valid, but it is one SU larger than the nodes alone need).
    if (p.ufm_ports > 0 && p.nodes % p.su_nodes == 0) {
      const std::int64_t sus = p.nodes / p.su_nodes;
      std::cerr << "note: the UFM appliance's ports take the slot of a node, so " << p.nodes
                << " nodes and the UFM "
                << "need " << sus + 1 << " SUs of " << p.su_nodes
                << " (the last holds the UFM alone); --nodes " << p.nodes - 1 << " keeps " << sus
                << " SUs, as the DGX SuperPOD design does (127 nodes and the UFM "
                << "in 4 SUs of 32)\n";
    }
  });

  auto ky = std::make_shared<KaryOpts>();
  c = gen->add_subcommand("kary-ntree", "k-ary n-tree: k^n hosts, n levels of 2k-port switches.\n"
                                        "Example: ibnetsim topo generate kary-ntree --k 8 --n 3 -o fabric.json");
  c->add_option("--k", ky->k, "half the switch radix")->capture_default_str();
  c->add_option("--n", ky->n, "levels (switch tiers), 1..3")->capture_default_str();
  c->add_option("--rate", ky->rate, "link rate")->capture_default_str();
  c->add_option("-o,--output", ky->out, "output file ('-' = stdout)")->capture_default_str();
  c->add_option("--max-hosts", ky->max_hosts, kMaxHostsHelp)->capture_default_str();
  add_switch_model_option(c, ky->switch_model);
  c->callback([ky] {
    topo::KaryNTreeParams p;
    check_max_hosts(ky->max_hosts);
    p.max_hosts = ky->max_hosts;
    p.k = ky->k;
    p.n = ky->n;
    p.speed = topo::parse_link_speed(ky->rate, "--rate");
    emit_fabric_json(with_switch_model(topo::build_kary_ntree(p), ky->switch_model), ky->out);
  });

  auto df = std::make_shared<DragonflyOpts>();
  c = gen->add_subcommand("dragonfly", "Dragonfly: g groups of a all-to-all routers, p hosts and h global links "
                                       "per router (balanced a = 2p = 2h by default, g <= a*h+1).\n"
                                       "Example: ibnetsim topo generate dragonfly --a 8 --p 4 --h 4 --g 33 -o df.json");
  c->add_option("--a", df->a, "routers per group");
  c->add_option("--p", df->p, "hosts per router");
  c->add_option("--h", df->h, "global links per router");
  c->add_option("--g", df->g, "groups (default a*h+1)");
  c->add_option("--arrangement", df->arrangement, "global links: absolute, relative or circulant")
      ->capture_default_str();
  c->add_option("--rate", df->rate, "link rate")->capture_default_str();
  c->add_option("-o,--output", df->out, "output file ('-' = stdout)")->capture_default_str();
  c->add_option("--max-hosts", df->max_hosts, kMaxHostsHelp)->capture_default_str();
  add_switch_model_option(c, df->switch_model);
  c->callback([df] {
    topo::DragonflyParams p;
    p.a = at_least(df->a, 1, "--a");
    p.p = at_least(df->p, 1, "--p");
    p.h = at_least(df->h, 1, "--h");
    p.g = at_least(df->g, 2, "--g");
    check_max_hosts(df->max_hosts);
    p.max_hosts = df->max_hosts;
    p.arrangement = topo::parse_arrangement(df->arrangement, "--arrangement");
    p.speed = topo::parse_link_speed(df->rate, "--rate");
    emit_fabric_json(with_switch_model(topo::build_dragonfly(p), df->switch_model), df->out);
  });
}

void add_import(CLI::App& topo) {
  auto* imp = topo.add_subcommand("import", "Import a real fabric description.");
  imp->require_subcommand(1);
  auto o = std::make_shared<IoOpts>();
  auto* c = imp->add_subcommand("ibnetdiscover", "Read `ibnetdiscover` or `ibnetdiscover -p` output.\n"
                                                 "Example: ibnetsim topo import ibnetdiscover topo.txt -o fabric.json");
  c->add_option("FILE", o->input, "ibnetdiscover output")->required();
  c->add_option("-o,--output", o->out, "output fabric JSON ('-' = stdout)")->capture_default_str();
  c->callback([o] {
    refuse_output_equal_to_input(o->out, {o->input}, "-o");
    auto r = topo::import_ibnetdiscover_file(o->input);
    for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
    for (const auto& n : r.notes) std::cerr << "note: " << n << "\n";
    emit_fabric_json(r.fabric, o->out);
  });
}

void add_info(CLI::App& topo) {
  auto o = std::make_shared<IoOpts>();
  auto* c = topo.add_subcommand("info", "Describe a fabric: hosts, switches, links, per-tier ports and "
                                        "oversubscription, bisection, diameter, path diversity.\n"
                                        "Example: ibnetsim topo info fabric.json --json");
  c->add_option("FABRIC", o->input, "fabric JSON or ibnetdiscover output")->required();
  c->add_flag("--json", o->json, "print JSON instead of a table");
  c->callback([o] {
    const auto loaded = load_fabric_any(o->input);
    for (const auto& w : loaded.warnings) std::cerr << "warning: " << w << "\n";
    const auto s = topo::describe(loaded.fabric);
    if (o->json) std::cout << topo::summary_to_json(s).dump(2) << "\n";
    else std::cout << topo::summary_to_text(s);
  });
}

void add_export(CLI::App& topo) {
  auto o = std::make_shared<IoOpts>();
  auto* c = topo.add_subcommand("export", "Write a fabric as DOT, JSON or ibnetdiscover text.\n"
                                          "Example: ibnetsim topo export fabric.json --format dot -o fabric.dot");
  c->add_option("FABRIC", o->input, "fabric JSON or ibnetdiscover output")->required();
  c->add_option("--format", o->format, "dot, json or ibnetdiscover")
      ->check(CLI::IsMember({"dot", "json", "ibnetdiscover"}))
      ->capture_default_str();
  c->add_option("-o,--output", o->out, "output file ('-' = stdout)")->capture_default_str();
  c->callback([o] {
    refuse_output_equal_to_input(o->out, {o->input}, "-o");
    const auto loaded = load_fabric_any(o->input);
    for (const auto& w : loaded.warnings) std::cerr << "warning: " << w << "\n";
    std::ostringstream s;
    if (o->format == "dot") topo::save_fabric_dot(loaded.fabric, s);
    else if (o->format == "json") topo::save_fabric_json(loaded.fabric, s);
    else topo::export_ibnetdiscover(loaded.fabric, s);
    emit(o->out, s.str());
  });
}

struct BomOpts {
  std::string input, catalog, switch_model, nic_model;
  bool json = false, csv = false;
};

void add_bom(CLI::App& topo) {
  auto o = std::make_shared<BomOpts>();
  auto* c = topo.add_subcommand("bom", "Bill of materials: switches per tier and model, ports used/free, cables per "
                                       "tier by class (DAC, ACC, fibre), transceivers (one per twin-port cage), NICs, "
                                       "cost and power from a parts catalog.\n"
                                       "Example: ibnetsim topo bom fabric.json --json");
  c->add_option("FABRIC", o->input, "fabric JSON or ibnetdiscover output")->required();
  c->add_option("--catalog", o->catalog, "parts catalog JSON (default: data/catalog/parts.json)");
  c->add_option("--switch", o->switch_model, "price every switch as this catalog model (default: by radix and rate)");
  c->add_option("--nic-model", o->nic_model, "price every HCA as this catalog NIC (default: by rate)");
  auto* j = c->add_flag("--json", o->json, "print JSON (switches, cables, transceivers, cost_usd, power_w, by_tier)");
  c->add_flag("--csv", o->csv, "print one CSV row per BOM line")->excludes(j);
  c->callback([o] {
    const auto loaded = load_fabric_any(o->input);
    for (const auto& w : loaded.warnings) std::cerr << "warning: " << w << "\n";
    const auto catalog = topo::Catalog::load(catalog_path(o->catalog));
    const auto bom = topo::bill_of_materials(loaded.fabric, catalog, {o->switch_model, o->nic_model});
    if (o->json) std::cout << topo::bom_to_json(bom).dump(2) << "\n";
    else if (o->csv) std::cout << topo::bom_to_csv(bom);
    else std::cout << topo::bom_to_text(bom);
  });
}

} // namespace

void add_topo_commands(CLI::App& app) {
  auto* topo = app.add_subcommand("topo", "Generate, import, describe and export fabrics.");
  topo->require_subcommand(1);
  add_generate(*topo);
  add_import(*topo);
  add_info(*topo);
  add_export(*topo);
  add_bom(*topo);
  add_routes_command(*topo);
}

} // namespace ibn::app
