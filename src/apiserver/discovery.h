// Discovery documents built once from the registry: /api, /apis,
// /api/v1, /apis/<group>, /apis/<group>/<version>, both the legacy JSON and
// aggregated discovery (apidiscovery.k8s.io/v2) when the client asks for it.
// The documents are interned (base/intern.h): servers of one process with
// the same kinds, such as simulated members, share them.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "api/registry.h"

namespace flotilla::apiserver {

class Discovery {
 public:
  explicit Discovery(const api::Registry& registry);

  // Legacy documents by path ("/api", "/apis", "/api/v1", "/apis/apps",
  // "/apis/apps/v1"); nullptr when the path is not a discovery path.
  const std::string* Legacy(const std::string& path) const;
  // Aggregated (v2) documents for "/api" and "/apis".
  const std::string* Aggregated(const std::string& path) const;

 private:
  using Documents = std::map<std::string, std::shared_ptr<const std::string>>;
  Documents legacy_;
  Documents aggregated_;
};

// True when the Accept header asks for aggregated discovery v2.
bool WantsAggregatedDiscovery(const std::string& accept);
inline constexpr const char* kAggregatedDiscoveryContentType =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

}  // namespace flotilla::apiserver
