// Any bytes as the body of a create (or, by the first byte, an update of an
// existing Deployment) of one of the kinds the federation serves, through
// the whole request path with dryRun=All: JSON decoding, the schema check
// (strict or not), defaulting, validation, the federation's admission. The
// answer must be a clean 2xx or 4xx.
#include <array>
#include <string>

#include "fuzz/api_server.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {

void ApiObject(std::span<const uint8_t> data) {
  static constexpr std::array<const char*, 10> kCollections = {
      "/apis/apps/v1/namespaces/default/deployments",
      "/apis/apps/v1/namespaces/default/replicasets",
      "/apis/apps/v1/namespaces/default/statefulsets",
      "/api/v1/namespaces/default/configmaps",
      "/api/v1/namespaces/default/secrets",
      "/api/v1/namespaces/default/services",
      "/api/v1/namespaces",
      "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
      "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
      "/apis/federation/v1beta1/clusters",
  };
  if (data.empty()) return;
  uint8_t choice = data[0];
  std::string_view body = AsText(data.subspan(1));
  std::string query = (choice & 0x80) != 0 ? "?dryRun=All&fieldValidation=Strict" : "?dryRun=All";
  bool update = (choice & 0x40) != 0;
  std::string target = update ? std::string(kExistingDeployment) + query
                              : kCollections[choice % kCollections.size()] + query;
  ExpectClean(Call(update ? "PUT" : "POST", target, "application/json", body), target);
}

}  // namespace flotilla::fuzz
