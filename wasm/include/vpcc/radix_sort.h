// Sorting by 64-bit voxel keys: a least-significant-digit radix sort, about four times faster
// than std::sort on a frame's 800 k keys at 8i density, where sorting was a tenth of the
// encoder's time (segmentation's cells, the projection lines of empty-pixel filling) and a third
// of sampling a glTF frame (its surface samples by voxel). Stable, so the result is exactly
// std::stable_sort's (and, for plain keys, std::sort's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vpcc {

/// Sorts `items` ascending by key(item) (a uint64_t), stably. 16-bit digits, four passes at
/// most; a pass whose digit is the same for every item (the unused bits between packed
/// coordinates) moves nothing and is skipped.
template <typename T, typename KeyOf>
void radixSortBy(std::vector<T>& items, KeyOf key) {
  constexpr unsigned kDigitBits = 16;
  constexpr size_t kBuckets = size_t(1) << kDigitBits;
  if (items.size() < 2) return;
  std::vector<T> scratch(items.size());
  std::vector<size_t> count(kBuckets);
  for (unsigned shift = 0; shift < 64; shift += kDigitBits) {
    std::fill(count.begin(), count.end(), 0);
    for (const T& item : items) ++count[(key(item) >> shift) & (kBuckets - 1)];
    if (count[(key(items[0]) >> shift) & (kBuckets - 1)] == items.size()) continue;  // one digit value: in order already
    size_t offset = 0;
    for (size_t& c : count) {
      const size_t n = c;
      c = offset;
      offset += n;
    }
    for (const T& item : items) scratch[count[(key(item) >> shift) & (kBuckets - 1)]++] = item;
    items.swap(scratch);
  }
}

/// Sorts plain keys ascending.
inline void radixSort(std::vector<uint64_t>& keys) {
  radixSortBy(keys, [](uint64_t k) { return k; });
}

}  // namespace vpcc
