// Step 1 of the planner: which clusters a preferences entry matches, and in
// which order they are planned (weight descending, then the FNV-1 hash of
// name and workload key ascending, then name).
//
// This is most of a small plan's cost, so it is written for speed: the FNV-1
// chains of four clusters run side by side (one chain is a serial
// multiply-xor), a cluster's own entry is found through the hash of its name
// that the tie-break computes on the way, and the sort compares one 64-bit
// key.
#include <algorithm>
#include <vector>

#include "planner/internal.h"

namespace flotilla::planner::internal {
namespace {

constexpr uint32_t kFnvOffsetBasis = 2166136261u;
constexpr uint32_t kFnvPrime = 16777619u;

uint32_t Fnv1(uint32_t h, std::string_view bytes) {
  for (char c : bytes) h = (h * kFnvPrime) ^ static_cast<uint8_t>(c);
  return h;
}

// Four FNV-1 chains side by side over strings of possibly different lengths.
struct Lanes {
  uint32_t h[4] = {kFnvOffsetBasis, kFnvOffsetBasis, kFnvOffsetBasis, kFnvOffsetBasis};

  void Add(const std::string_view (&s)[4]) {
    const size_t common = std::min({s[0].size(), s[1].size(), s[2].size(), s[3].size()});
    const auto* p0 = reinterpret_cast<const uint8_t*>(s[0].data());
    const auto* p1 = reinterpret_cast<const uint8_t*>(s[1].data());
    const auto* p2 = reinterpret_cast<const uint8_t*>(s[2].data());
    const auto* p3 = reinterpret_cast<const uint8_t*>(s[3].data());
    uint32_t h0 = h[0], h1 = h[1], h2 = h[2], h3 = h[3];
    for (size_t j = 0; j < common; ++j) {
      h0 = (h0 * kFnvPrime) ^ p0[j];
      h1 = (h1 * kFnvPrime) ^ p1[j];
      h2 = (h2 * kFnvPrime) ^ p2[j];
      h3 = (h3 * kFnvPrime) ^ p3[j];
    }
    h[0] = Fnv1(h0, s[0].substr(common));
    h[1] = Fnv1(h1, s[1].substr(common));
    h[2] = Fnv1(h2, s[2].substr(common));
    h[3] = Fnv1(h3, s[3].substr(common));
  }
  void AddToAll(std::string_view bytes) {
    const std::string_view same[4] = {bytes, bytes, bytes, bytes};
    Add(same);
  }
};

// Calls visit(i, name_hash, full_hash) for every cluster, with the FNV-1 of
// its name and of its name followed by the workload key. A last group of
// fewer than four repeats its last cluster, whose visit is not repeated.
template <typename Visit>
void HashClusters(std::span<const ClusterState> clusters, std::string_view key, Visit&& visit) {
  const size_t n = clusters.size();
  for (size_t i = 0; i < n; i += 4) {
    const size_t last = std::min(i + 3, n - 1);
    const std::string_view names[4] = {clusters[i].name, clusters[std::min(i + 1, last)].name,
                                       clusters[std::min(i + 2, last)].name, clusters[last].name};
    Lanes lanes;
    lanes.Add(names);
    const Lanes name_hashes = lanes;
    lanes.AddToAll(key);
    for (size_t k = 0; i + k <= last; ++k) visit(i + k, name_hashes.h[k], lanes.h[k]);
  }
}

// The entries of the preferences, found by the FNV-1 hash of the name: a few
// are scanned, many are sorted by hash with the start of every bucket of
// hashes sharing their top bits.
class Entries {
 public:
  explicit Entries(const Preferences& prefs) {
    for (const auto& [name, p] : prefs.clusters) {
      if (name == kAnyCluster) {
        star_ = &p;
        continue;
      }
      Entry& e = entries_.emplace_back();
      e.name = name;
      e.prefs = &p;
    }
    const size_t m = entries_.size();
    for (size_t i = 0; i < m; i += 4) {
      const size_t last = std::min(i + 3, m - 1);
      const std::string_view names[4] = {entries_[i].name, entries_[std::min(i + 1, last)].name,
                                         entries_[std::min(i + 2, last)].name, entries_[last].name};
      Lanes lanes;
      lanes.Add(names);
      for (size_t k = 0; i + k <= last; ++k) entries_[i + k].hash = lanes.h[k];
    }
    if (entries_.size() <= kLinearMax) return;  // few: scanned whole
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.hash < b.hash; });
    while ((size_t{1} << bits_) < entries_.size()) ++bits_;
    starts_.assign((size_t{1} << bits_) + 1, 0);
    for (const Entry& e : entries_) ++starts_[Bucket(e.hash) + 1];
    for (size_t b = 1; b < starts_.size(); ++b) starts_[b] += starts_[b - 1];
  }

  // The entry for `name`, else "*", else nullptr.
  const ClusterPreferences* Find(std::string_view name, uint32_t name_hash) const {
    if (starts_.empty()) {
      for (const Entry& e : entries_) {
        if (e.hash == name_hash && e.name == name) return e.prefs;
      }
      return star_;
    }
    const size_t bucket = Bucket(name_hash);
    for (size_t k = starts_[bucket]; k < starts_[bucket + 1]; ++k) {
      if (entries_[k].hash == name_hash && entries_[k].name == name) return entries_[k].prefs;
    }
    return star_;
  }

 private:
  static constexpr size_t kLinearMax = 8;
  struct Entry {
    uint32_t hash = 0;
    std::string_view name;
    const ClusterPreferences* prefs = nullptr;
  };
  size_t Bucket(uint32_t hash) const { return bits_ == 0 ? 0 : hash >> (32 - bits_); }

  Scratch<Entry> entries_;
  const ClusterPreferences* star_ = nullptr;
  int bits_ = 0;
  std::vector<uint32_t> starts_;
};

// Name, then position: separates clusters of equal weight and hash.
bool ByName(std::span<const ClusterState> clusters, const Ordered& a, const Ordered& b) {
  std::string_view na = clusters[a.index].name, nb = clusters[b.index].name;
  return na != nb ? na < nb : a.index < b.index;
}

// REQUIRES: sort keys set when `packed`.
void Sort(std::span<const ClusterState> clusters, bool packed, std::span<Ordered> order) {
  if (packed) {
    std::sort(order.begin(), order.end(), [&](const Ordered& a, const Ordered& b) {
      return a.sort_key != b.sort_key ? a.sort_key < b.sort_key : ByName(clusters, a, b);
    });
    return;
  }
  std::sort(order.begin(), order.end(), [&](const Ordered& a, const Ordered& b) {
    int64_t wa = std::max<int64_t>(a.prefs->weight, 0), wb = std::max<int64_t>(b.prefs->weight, 0);
    if (wa != wb) return wa > wb;
    return a.hash != b.hash ? a.hash < b.hash : ByName(clusters, a, b);
  });
}

}  // namespace

uint32_t TieBreak(std::string_view cluster, std::string_view workload_key) {
  return Fnv1(Fnv1(kFnvOffsetBasis, cluster), workload_key);
}

size_t PlanningOrder(std::span<const ClusterState> clusters, std::string_view workload_key,
                     const Preferences& prefs, std::span<Ordered> order) {
  const Entries own(prefs);
  size_t matched = 0;
  // Weight descending then hash ascending is one integer when every weight
  // fits in 32 bits, as weights do in practice.
  bool packed = true;
  HashClusters(clusters, workload_key, [&](size_t i, uint32_t name_hash, uint32_t hash) {
    const ClusterPreferences* p = own.Find(clusters[i].name, name_hash);
    if (p == nullptr) return;
    const int64_t weight = std::max<int64_t>(p->weight, 0);
    packed &= weight <= UINT32_MAX;
    // Field by field: a braced temporary costs a store-forwarding stall here.
    Ordered& o = order[matched++];
    o.sort_key = (static_cast<uint64_t>(UINT32_MAX - static_cast<uint32_t>(weight)) << 32) | hash;
    o.hash = hash;
    o.index = static_cast<uint32_t>(i);
    o.prefs = p;
  });
  Sort(clusters, packed, order.first(matched));
  return matched;
}

}  // namespace flotilla::planner::internal
