#include "models/routing/reroute.hpp"

#include "sim/error.hpp"

namespace ibn::routing {

topo::Fabric without_links(const topo::Fabric& f, const std::vector<bool>& failed) {
  topo::Fabric out;
  for (const auto& n : f.nodes()) out.add_node(n);
  for (topo::LinkId l = 0; l < f.num_links(); ++l)
    if (l >= failed.size() || !failed[l]) out.add_link(f.link(l));
  out.origin = f.origin;
  return out;
}

Rerouted reroute(const topo::Fabric& f, const std::vector<bool>& failed, const std::string& algorithm,
                 const RoutingOptions& opt) {
  const auto reg = builtin_routing();
  Rerouted r;
  r.fabric = std::make_unique<topo::Fabric>(without_links(f, failed));
  try {
    r.tables = reg.get(algorithm).factory(*r.fabric, opt);
  } catch (const InputError& e) {
    throw InputError("reroute with '" + algorithm + "' around the failed links: " + e.what());
  }
  return r;
}

} // namespace ibn::routing
