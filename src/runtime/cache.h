// The informer's cache: a thread-safe store of objects keyed by
// "namespace/name" ("name" for cluster-scoped objects), with indexes, and the
// Lister through which controllers read it.
//
// Objects are handed out as std::shared_ptr<const json::object>: read-only
// and immutable. A write replaces the pointer, so a reader keeps a consistent
// object however long it holds it; to change an object, copy it. Built-in
// indexes: by namespace, by owner uid (metadata.ownerReferences[].uid) and by
// label ("key=value"); more can be added with AddIndex.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "api/labels.h"
#include "base/json.h"
#include "base/mutex.h"

namespace flotilla::runtime {

using ObjectPtr = std::shared_ptr<const json::object>;

// client-go's MetaNamespaceKeyFunc: "namespace/name", or "name".
std::string ObjectKey(const json::object& obj);
std::string ObjectKey(std::string_view ns, std::string_view name);
// metadata.resourceVersion, "" when absent.
std::string ResourceVersionOf(const json::object& obj);
// The same, a view into `obj`.
std::string_view ResourceVersionView(const json::object& obj);

// The values an object has in one index (empty: not in the index).
using IndexFunc = std::function<std::vector<std::string>(const json::object& obj)>;

inline constexpr std::string_view kNamespaceIndex = "namespace";
inline constexpr std::string_view kOwnerIndex = "owner";
inline constexpr std::string_view kLabelIndex = "label";

// Thread-safe.
class Cache {
 public:
  Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // Adds an index (re-indexing what is stored). Replaces one of the same name.
  void AddIndex(const std::string& name, IndexFunc fn);

  // Stores `obj` under ObjectKey(*obj); returns what it replaced (or null).
  ObjectPtr Upsert(ObjectPtr obj);
  // The same, for a caller that has the key already: `key` is ObjectKey(*obj).
  ObjectPtr Upsert(const std::string& key, ObjectPtr obj);
  // Removes `key`; returns what was stored (or null).
  ObjectPtr Remove(const std::string& key);

  ObjectPtr Get(const std::string& key) const;
  // Every object, in key order.
  std::vector<ObjectPtr> List() const;
  std::vector<std::string> Keys() const;
  // Objects whose `index` values include `value`, in key order; empty for an
  // unknown index.
  std::vector<ObjectPtr> ByIndex(std::string_view index, const std::string& value) const;
  // How many ByIndex would return, without making the list.
  size_t CountByIndex(std::string_view index, const std::string& value) const;
  size_t Size() const;

 private:
  struct Index {
    IndexFunc fn;
    absl::btree_map<std::string, absl::btree_set<std::string>, std::less<>> keys_by_value;
  };
  void IndexLocked(Index& index, const std::string& key, const json::object* old,
                   const json::object* now) REQUIRES(mu_);

  mutable SharedMutex mu_;
  // B-trees: in key order, as List promises, at a fraction of std::map's
  // node overhead and cache misses per lookup.
  absl::btree_map<std::string, ObjectPtr> items_ GUARDED_BY(mu_);
  std::map<std::string, Index, std::less<>> indexes_ GUARDED_BY(mu_);
};

// Read access to a Cache for controllers. Cheap to copy; REQUIRES: the cache
// outlives it.
class Lister {
 public:
  explicit Lister(const Cache& cache) : cache_(&cache) {}

  // Null when absent. `ns` is "" for cluster-scoped objects.
  ObjectPtr Get(std::string_view ns, std::string_view name) const;
  // Objects in `ns` ("" = all namespaces) matching `selector`, in key order.
  std::vector<ObjectPtr> List(std::string_view ns = "",
                              const api::LabelSelector& selector = {}) const;
  // Objects with an ownerReference to `uid`.
  std::vector<ObjectPtr> ByOwner(std::string_view uid) const;
  // Objects labelled key=value.
  std::vector<ObjectPtr> ByLabel(std::string_view key, std::string_view value) const;
  std::vector<ObjectPtr> ByIndex(std::string_view index, const std::string& value) const;

 private:
  const Cache* cache_;
};

}  // namespace flotilla::runtime
