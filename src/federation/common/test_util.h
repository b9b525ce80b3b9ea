// Helpers for the federation tests.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/json.h"
#include "federation/common/member_informers.h"

namespace flotilla::federation::testing {

// `text`, a JSON object (the test's own literal).
inline json::object Obj(std::string_view text) { return json::parse(text).as_object(); }

// Whether at least `clusters` members have informers and every one of them
// has synced (one on a kind the member does not serve counts as synced).
// A test that moves a fake clock waits for this after a start: a check that
// runs before the caches sync plans nothing, and the one their sync brings
// would otherwise read the clock already moved.
inline bool MembersSynced(const MemberInformers& members, size_t clusters) {
  std::vector<std::string> names = members.Clusters();
  if (names.size() < clusters) return false;
  for (const std::string& cluster : names) {
    for (const auto& [resource, informer] : members.Of(cluster)) {
      if (!informer->HasSynced() && informer->Served()) return false;
    }
  }
  return true;
}

}  // namespace flotilla::federation::testing
