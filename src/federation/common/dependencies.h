// Dependencies propagated with the objects that need them (docs/
// interpreter.md, "Dependencies"): an object whose customization defines
// GetDependencies (dependencyInterpretation) names the objects it needs (a
// ConfigMap, a Secret, ...); each of those goes, besides where its own
// placement sends it, to every cluster where a dependent has its copy.
// This index remembers, per dependent, what it names and where its copies
// are, and answers the other way: where an object is needed.
//
// Only references by name are followed (a labelSelector reference is not);
// a reference without a namespace is in the dependent's namespace.
//
// Thread-safe.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/mutex.h"

namespace flotilla::federation {

// An object named by a dependent.
struct DependencyRef {
  std::string api_version, kind, ns, name;
  friend auto operator<=>(const DependencyRef&, const DependencyRef&) = default;
};

// The references by name in GetDependencies' result (Karmada's
// DependentObjectReference list), in `ns` unless they name their own.
std::vector<DependencyRef> DependencyRefs(const json::array& refs, const std::string& ns);

class Dependencies {
 public:
  // `dependent` (unique: "<group>/<plural>:<key>") names `refs` and has its
  // copies in `clusters`. Returns the objects whose clusters changed (those
  // it named before or names now).
  std::vector<DependencyRef> Set(const std::string& dependent, std::vector<DependencyRef> refs,
                                 std::set<std::string> clusters);
  // `dependent` is gone; same result.
  std::vector<DependencyRef> Remove(const std::string& dependent);
  // Whether some dependent of `ref` has its copy in `cluster`.
  bool NeededIn(const DependencyRef& ref, const std::string& cluster) const;

 private:
  struct Entry {
    std::vector<DependencyRef> refs;
    std::set<std::string> clusters;
  };
  // Drops `dependent` from by_ref_. REQUIRES: mu_ held.
  void Unindex(const std::string& dependent, const Entry& entry) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, Entry> by_dependent_ GUARDED_BY(mu_);
  // For each named object, the clusters of each dependent that names it.
  std::map<DependencyRef, std::map<std::string, std::set<std::string>>> by_ref_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation
