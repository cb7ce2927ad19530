#pragma once
// SimGrid 3.32's NetworkModel interface, declared here because SimGrid does not install its header
// (src/kernel/resource/NetworkModel.hpp is private; its classes are not exported by name, only reachable
// through the network model object a NetZone holds). Private to the flow engine (models/flow).
//
// Why: the flow engine starts one network action per message directly on SimGrid's CM02 network model
// (NetworkModel::communicate). The only public alternative, one s4u host-to-host Comm per message, costs an
// O(comms in flight) std::list::remove in SimGrid 3.32's maestro per finished message (the activity list
// became a std::set only in 3.34): about 6x the wall time on a 4,096-rank ring (docs/flow-engine.md).
// SimGrid has no public extension point that reaches the network model's sharing (lmm) from outside either:
// Engine::add_model takes a Model of our own, but lmm::System and NetworkModel are both private.
//
// So the build is pinned to SimGrid 3.32 (CMakeLists.txt fails at configure time on any other version, and
// the static_assert below at compile time), and this declaration is 3.32's: the bases Model (public header)
// and NetworkModelIntf (public header), then NetworkModel's own virtual functions in 3.32's declaration
// order. The compiler derives the call from it; nothing looks up symbols or vtable slots by hand. At run time
// the flow engine still checks that the model is CM02 (RTTI of its public base) and that the first action it
// gets back belongs to the model and costs what was asked, and otherwise uses the s4u path.
#include <simgrid/forward.h>
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/version.h>

#include <string>
#include <vector>

static_assert(SIMGRID_VERSION_MAJOR == 3 && SIMGRID_VERSION_MINOR == 32,
              "models/flow/simgrid_network_model.hpp declares SimGrid 3.32's NetworkModel; another SimGrid "
              "needs this declaration checked against its src/kernel/resource/NetworkModel.hpp");

namespace simgrid::kernel::resource {

class NetworkModel : public Model, public NetworkModelIntf {
 public:
  NetworkModel(const NetworkModel&) = delete;
  NetworkModel& operator=(const NetworkModel&) = delete;
  ~NetworkModel() override;

  virtual StandardLinkImpl* create_link(const std::string& name, const std::vector<double>& bandwidths) = 0;
  virtual StandardLinkImpl* create_wifi_link(const std::string& name,
                                             const std::vector<double>& bandwidths) = 0;
  /// Starts a communication of `size` bytes from src to dst (route from the NetZone; rate < 0: no cap) and
  /// returns its action, owned by the caller until it is unref'd.
  virtual Action* communicate(s4u::Host* src, s4u::Host* dst, double size, double rate) = 0;
  virtual double get_latency_factor(double size);
  virtual double get_bandwidth_factor(double size);
};

/// A network action (what the link signal reports): an Action with source and destination hosts.
class NetworkAction : public Action {
 public:
  NetworkAction(const NetworkAction&) = delete;
  NetworkAction& operator=(const NetworkAction&) = delete;
};

} // namespace simgrid::kernel::resource
