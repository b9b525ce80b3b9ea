// Request bodies in the Kubernetes protobuf encoding
// (application/vnd.kubernetes.protobuf), as kubectl's typed clients send them
// (`kubectl create namespace|configmap|secret|deployment|service ...`,
// `kubectl run`, `kubectl autoscale`).
//
// A body is the 4-byte magic "k8s\0" and a runtime.Unknown message: the
// object's apiVersion and kind, and the object's own protobuf message. We
// decode that message, through a table of the k8s.io/api message layouts
// (protobuf_schema.cc), into the JSON object a JSON client would have sent
// for the same Go value, so everything after decoding is the JSON path.
// Only decoding: responses stay JSON and protobuf is advertised nowhere.
#pragma once

#include <string>
#include <string_view>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

// True when `content_type` is application/vnd.kubernetes.protobuf (with or
// without parameters).
bool IsKubernetesProtobuf(std::string_view content_type);

// The runtime.Unknown envelope of a protobuf body. `raw` points into the
// body passed to ParseProtobufEnvelope, which must outlive it.
struct ProtobufEnvelope {
  std::string api_version;  // "" when the sender left it out
  std::string kind;
  std::string_view raw;
};

// Reads the magic and the envelope. BadRequest "unable to decode protobuf
// body: ..." when the bytes are not one.
StatusOr<ProtobufEnvelope> ParseProtobufEnvelope(std::string_view body);

// True when the object message of apiVersion/kind can be decoded.
bool HasProtobufSchema(std::string_view api_version, std::string_view kind);

// Decodes envelope.raw as the message of `api_version`/`kind` into a JSON
// object carrying that apiVersion and kind. Fields are named and shaped as
// in JSON (maps as objects, bytes as base64, Time as RFC 3339, Quantity and
// IntOrString as in JSON); a value field holding its zero value is left out,
// as Go's JSON encoder leaves out an empty `omitempty` field, while a set
// pointer field (replicas: 0) is kept. A field number the table does not
// know, a wrong wire type, truncation or invalid UTF-8 in a string is
// BadRequest naming the field path, the message and the field number.
// REQUIRES: HasProtobufSchema(api_version, kind).
StatusOr<json::object> DecodeProtobufObject(std::string_view raw, std::string_view api_version,
                                            std::string_view kind);

}  // namespace flotilla::api
