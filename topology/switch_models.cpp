#include "topology/switch_models.hpp"

#include "sim/error.hpp"
#include "topology/fabric.hpp"

#include <algorithm>
#include <cctype>

namespace ibn::topo {

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// Sources (read 2026-12-05 through the project's search corpora; see docs/packet-models.md "Switch models").
constexpr const char* kQuantumSrc =
    "assumed: the project's HDR default (130 ns, model-reference.md). NVIDIA's QM87xx user manual states the "
    "latency in its Introduction (revision 1.4, Oct 2019: 'Latency updated in Introduction', "
    "https://docs.nvidia.com/networking/display/QM87XX/Document+Revision+History), but the value itself was "
    "not readable in the sources searched";
constexpr const char* kQuantum2Src =
    "assumed: the project's NDR default (200 ns). No NVIDIA datasheet value found; secondary sources "
    "disagree: ~330 ns (https://yobitel.com/knowledge-base/nvidia-quantum-2), 'under 150 ns' "
    "(https://www.router-switch.com/faq/nvidia-quantum-2-qm9700-vs-spectrum-4-sn5400.html), '< 400 ns' "
    "(https://systemspecbase.com/nvidia-quantum-2-switches-and-port-configuration-metrics/)";
constexpr const char* kX800Src = "assumed: no value found (NVIDIA's Quantum-X800 pages searched give ports "
                                 "and rates only); taken equal to "
                                 "Quantum-2";
constexpr const char* kSpectrum2Src =
    "Linley Group newsletter 'Spectrum-2 Debuts 200GbE' (2017-07-31): a single-chip device with 300 ns "
    "latency, https://www.linleygroup.com/newsletters/newsletter_detail.php?num=5734&year=2017&tag=3 "
    "(secondary: an analyst's report of Mellanox's announcement; chip port-to-port figure)";
constexpr const char* kSpectrum3Src =
    "assumed: no value found for Spectrum-3 (SN4000 user manual and announcements searched); taken equal to "
    "Spectrum-2";
constexpr const char* kSpectrum4Src =
    "assumed: no value found; NVIDIA's announcement says 'true, port-to-port, cut-through latency' without a "
    "figure (https://convergedigest.blogspot.com/2022/03/nvidia-unveils-512t-spectrum-4-switch.html); taken "
    "equal to Spectrum-2";

std::vector<SwitchModel> make_models() {
  return {
      {"quantum",
       "NVIDIA Quantum (HDR 200 Gb/s InfiniBand): QM8700, QM8790",
       "ib",
       "HDR",
       130,
       true,
       kQuantumSrc,
       {"quantum", "qm8700", "qm8790", "mqm8700", "mqm8790", "qm87"}},
      {"quantum-2",
       "NVIDIA Quantum-2 (NDR 400 Gb/s InfiniBand): QM9700, QM9790",
       "ib",
       "NDR",
       200,
       true,
       kQuantum2Src,
       {"quantum-2", "quantum2", "qm9700", "qm9790", "mqm9700", "mqm9790", "qm97"}},
      {"quantum-x800",
       "NVIDIA Quantum-X800 (XDR 800 Gb/s InfiniBand): Q3400, Q3200",
       "ib",
       "XDR",
       200,
       true,
       kX800Src,
       {"quantum-x800", "quantumx800", "q3400", "q3200", "q3401", "q3450"}},
      {"spectrum-2",
       "NVIDIA Spectrum-2 (200GbE, RoCE): SN3700, SN3420, SN3800",
       "ethernet",
       "200GbE",
       300,
       false,
       kSpectrum2Src,
       {"spectrum-2", "spectrum2", "sn3700", "sn3700c", "sn3420", "sn3800", "sn37"}},
      {"spectrum-3",
       "NVIDIA Spectrum-3 (400GbE, RoCE): SN4600, SN4600C, SN4700, SN4410",
       "ethernet",
       "400GbE",
       300,
       true,
       kSpectrum3Src,
       {"spectrum-3", "spectrum3", "sn4600", "sn4600c", "sn4700", "sn4410", "sn46", "sn47"}},
      {"spectrum-4",
       "NVIDIA Spectrum-4 (800GbE, RoCE, Spectrum-X): SN5600, SN5400",
       "ethernet",
       "800GbE",
       300,
       true,
       kSpectrum4Src,
       {"spectrum-4", "spectrum4", "sn5600", "sn5400", "sn56", "sn54"}},
  };
}

/// The longest name of any model found in `text` (lower case), so "quantum-2" beats "quantum".
const SwitchModel* longest_match(const std::string& text) {
  const SwitchModel* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& m : switch_models())
    for (auto n : m.names)
      if (n.size() > best_len && text.find(n) != std::string::npos) {
        best = &m;
        best_len = n.size();
      }
  return best;
}

} // namespace

const std::vector<SwitchModel>& switch_models() {
  static const std::vector<SwitchModel> models = make_models();
  return models;
}

const SwitchModel* find_switch_model(std::string_view name) {
  const std::string n = lower(trim(name));
  for (const auto& m : switch_models()) {
    if (n == m.id) return &m;
    for (auto a : m.names)
      if (n == a) return &m;
  }
  return nullptr;
}

std::string switch_model_ids() {
  std::string s;
  for (const auto& m : switch_models()) s += (s.empty() ? "" : ", ") + std::string(m.id);
  return s;
}

const SwitchModel& switch_model_or_throw(std::string_view name, const std::string& what) {
  if (const SwitchModel* m = find_switch_model(name)) return *m;
  throw InputError(what + ": unknown switch model '" + std::string(name) + "' (known: " + switch_model_ids() +
                   "; part numbers such as qm9700 or sn4600 are accepted too)");
}

const SwitchModel* infer_switch_model(std::string_view description) {
  const std::string d = lower(description);
  // Managed NVIDIA switches: "MF0;<hostname>:<model>/U1". Look at the model field alone first.
  const auto semi = d.find("mf0;");
  if (semi != std::string::npos) {
    const auto colon = d.find(':', semi);
    if (colon != std::string::npos) {
      const auto slash = d.find('/', colon);
      const std::string field =
          d.substr(colon + 1, slash == std::string::npos ? std::string::npos : slash - colon - 1);
      if (const SwitchModel* m = longest_match(field)) return m;
      return nullptr; // a model field that names no known model: the host name is not read for one
    }
  }
  return longest_match(d);
}

void apply_switch_models(Fabric& f, const std::string& spec, const std::string& what) {
  // "quantum-2" or "leaf=...,spine=...,core=..."
  std::string per_tier[4]; // index = tier (1..3)
  std::string entry[4];    // the "tier=MODEL" item that named it
  bool all = spec.find('=') == std::string::npos;
  if (all) {
    const std::string id = switch_model_or_throw(spec, what).id;
    for (int t = 1; t <= 3; ++t) per_tier[t] = id;
  } else {
    std::size_t pos = 0;
    while (pos <= spec.size()) {
      const auto comma = spec.find(',', pos);
      const std::string item = trim(
          std::string_view(spec).substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      const auto eq = item.find('=');
      if (eq == std::string::npos)
        throw InputError(what + ": expected MODEL or leaf=MODEL,spine=MODEL,core=MODEL, got '" + spec + "'");
      const std::string tier = lower(trim(std::string_view(item).substr(0, eq)));
      const std::string model = trim(std::string_view(item).substr(eq + 1));
      int t = tier == "leaf" ? 1 : tier == "spine" ? 2 : tier == "core" ? 3 : 0;
      if (t == 0) throw InputError(what + ": unknown tier '" + tier + "' (leaf, spine or core)");
      if (!entry[t].empty()) // the last value used to win silently
        throw InputError(what + ": tier '" + tier + "' is given twice ('" + entry[t] + "' and '" + item +
                         "'); give each tier once");
      entry[t] = item;
      per_tier[t] = switch_model_or_throw(model, what + " " + tier).id;
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    Node& node = f.mutable_node(n);
    if (node.kind != NodeKind::Switch && node.kind != NodeKind::Router) continue;
    const int t = std::clamp(node.tier, 1, 3);
    if (!per_tier[t].empty()) node.switch_model = per_tier[t];
  }
}

} // namespace ibn::topo
