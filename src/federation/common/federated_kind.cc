// The registry of federated kinds (federated_kind.h).
#include "federation/common/federated_kind.h"

#include <cstdio>
#include <cstdlib>

namespace flotilla::federation {

void KindRegistry::Add(FederatedKind kind) {
  if (Find(kind.controller) != nullptr) {
    // Two folders claiming one --controllers name is a build mistake.
    std::fprintf(stderr, "federated kind \"%s\" registered twice\n", kind.controller.c_str());
    std::abort();
  }
  kinds_.push_back(std::move(kind));
}

const FederatedKind* KindRegistry::Find(std::string_view controller) const {
  for (const FederatedKind& k : kinds_) {
    if (k.controller == controller) return &k;
  }
  return nullptr;
}

}  // namespace flotilla::federation
