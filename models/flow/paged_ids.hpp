#pragma once
// PagedIds<T>: records made for some of a large range of ids (the flow engine's directed links: id
// 2 * LinkId + direction), in the order they were made. The id -> record index is paged (1,024 ids per
// page, a page allocated when one of its ids is made), so that a platform of a few links on a fabric of
// 240,000 cable directions touches a few pages instead of a 1 MB index (issue 19 item 3: cost that
// follows the work). Lookup: two dependent loads.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace ibn::flow {

template <class T> class PagedIds {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  T& operator[](std::uint32_t id) { return made_[slot(id)]; } ///< requires made(id)
  const T& operator[](std::uint32_t id) const { return made_[slot(id)]; }
  bool made(std::uint32_t id) const { return id < ids_ && slot(id) != kNone; }
  /// The index of id in made_links() (kNone when not made; id < ids()).
  std::uint32_t slot(std::uint32_t id) const {
    const auto& page = pages_[id >> kPageBits];
    return page ? page[id & kPageMask] : kNone;
  }
  std::uint32_t ids() const { return ids_; }
  /// n more ids, not made.
  void add_ids(std::size_t n) {
    ids_ += static_cast<std::uint32_t>(n);
    pages_.resize((static_cast<std::size_t>(ids_) + kPageMask) >> kPageBits);
  }
  /// Makes id (each id once, id < ids()); the record is value-initialised, T::id set by the caller.
  T& make(std::uint32_t id) {
    auto& page = pages_[id >> kPageBits];
    if (!page) {
      page = std::make_unique<std::uint32_t[]>(kPageMask + 1);
      std::fill_n(page.get(), kPageMask + 1, kNone);
    }
    page[id & kPageMask] = static_cast<std::uint32_t>(made_.size());
    return made_.emplace_back();
  }
  /// The records, in the order they were made.
  const std::vector<T>& made_links() const { return made_; }

 private:
  static constexpr unsigned kPageBits = 10;
  static constexpr std::uint32_t kPageMask = (1u << kPageBits) - 1;
  std::uint32_t ids_ = 0;
  std::vector<std::unique_ptr<std::uint32_t[]>> pages_;
  std::vector<T> made_;
};

} // namespace ibn::flow
