// Any bytes as a Kubernetes protobuf body: the envelope and, when it names a
// kind with a schema, the object decoded directly; and the same bytes as a
// create's body (Content-Type application/vnd.kubernetes.protobuf,
// dryRun=All) of the kind the first byte picks, where the answer must be a
// clean 2xx or 4xx.
#include "api/protobuf.h"

#include <array>
#include <string>

#include "fuzz/api_server.h"
#include "fuzz/targets.h"

namespace flotilla::fuzz {

void Protobuf(std::span<const uint8_t> data) {
  static constexpr std::array<const char*, 4> kCollections = {
      "/apis/apps/v1/namespaces/default/deployments", "/api/v1/namespaces/default/configmaps",
      "/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/services"};
  if (data.empty()) return;
  std::string_view body = AsText(data.subspan(1));
  auto envelope = api::ParseProtobufEnvelope(body);
  if (envelope.ok() && api::HasProtobufSchema(envelope->api_version, envelope->kind)) {
    (void)api::DecodeProtobufObject(envelope->raw, envelope->api_version, envelope->kind);
  }
  std::string target = std::string(kCollections[data[0] % kCollections.size()]) + "?dryRun=All";
  ExpectClean(Call("POST", target, "application/vnd.kubernetes.protobuf", body), target);
}

}  // namespace flotilla::fuzz
