#include "sim/build_id.hpp"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace ibn {
namespace {

// dl_iterate_phdr's callback: the first object is the executable; its PT_NOTE segments hold the
// NT_GNU_BUILD_ID note (name "GNU").
int find_build_id(dl_phdr_info* info, std::size_t, void* out) {
  auto& id = *static_cast<std::string*>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const auto* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof n);
      const auto* name = p + sizeof n;
      const auto* desc = name + ((n.n_namesz + 3u) & ~3u);
      const auto* next = desc + ((n.n_descsz + 3u) & ~3u);
      if (next > end) break;
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static constexpr char kHex[] = "0123456789abcdef";
        for (std::uint32_t k = 0; k < n.n_descsz; ++k) {
          id.push_back(kHex[desc[k] >> 4]);
          id.push_back(kHex[desc[k] & 15]);
        }
        return 1;
      }
      p = next;
    }
  }
  return 1; // only the executable (the first object) is looked at
}

std::string read_build_id() {
  std::string id;
  dl_iterate_phdr(find_build_id, &id);
  return id;
}

} // namespace

const std::string& build_id() {
  static const std::string id = read_build_id(); // immutable once read
  return id;
}

} // namespace ibn
