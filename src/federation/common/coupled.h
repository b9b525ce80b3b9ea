// The seam between the workload strategies and coupled applications
// (federation/applications/): a workload of a coupled application is placed
// where its application runs, not on its own. common/ holds the interface;
// the application logic lives in its own folder.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "base/clock.h"
#include "base/json.h"
#include "client/client.h"

namespace flotilla::federation {

// What a workload of a coupled application gets.
struct CoupledPlacement {
  // cluster -> this workload's replicas there (its home, and the
  // destination of a move in progress).
  std::map<std::string, int64_t> replicas;
  // A cluster the workload's copy must be kept in even where its selector
  // no longer admits it: the home a move is leaving.
  std::optional<std::string> keep;
  // The clusters the decision saw (ready, caches synced); a copy elsewhere
  // is left as it is.
  std::set<std::string> seen;
  // The LocationAffinity condition.
  bool placed = false;
  std::string reason, message;
  // When the workload must be checked again (a timeout, a window, a retry).
  std::optional<TimePoint> next_check;
};

class CoupledPlacer {
 public:
  virtual ~CoupledPlacer() = default;
  // A kind whose workloads form applications: its federated informer is
  // read, its copies in the members (same name) are counted, and `enqueue`
  // checks one of its workloads (by key) again. REQUIRES: before the
  // context starts.
  virtual void AddKind(const client::ResourceRef& resource, const std::string& kind,
                       std::string preferences_annotation,
                       std::function<void(const std::string& key)> enqueue) = 0;
  // The placement of `obj`, a workload of that kind; nullopt when it is not
  // part of a coupled application.
  virtual std::optional<CoupledPlacement> Place(const json::object& obj, TimePoint now) = 0;
};

}  // namespace flotilla::federation
