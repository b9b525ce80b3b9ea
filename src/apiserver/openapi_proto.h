// The Swagger 2.0 document in protobuf, as kube-apiserver serves
// /openapi/v2 to a client that accepts
// application/com.github.proto-openapi.spec.v2@v1.0+protobuf: gnostic's
// openapi_v2.Document message. kubectl asks for it to validate what its
// OpenAPI v3 documents do not name, such as the items of a `kind: List`
// (what `kubectl get -o yaml` writes).
//
// Encoded: swagger, info (title, version), and the definitions with every
// schema field gnostic's Schema message has ($ref, format, title,
// description, default, the numeric and length bounds, pattern, required,
// enum, additionalProperties, type, items, allOf, properties, readOnly,
// example) and the x-* extensions as vendor extensions (their values as
// JSON text, which is YAML). Paths are left out: kubectl's validation reads
// the definitions and their x-kubernetes-group-version-kind. Pure;
// thread-safe.
#pragma once

#include <string>

#include "base/json.h"

namespace flotilla::apiserver {

// What kubectl accepts, and what the answer says it is (a media type
// cannot hold the '@': Go's mime parser refuses it).
inline constexpr char kOpenApiV2ProtobufType[] =
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
inline constexpr char kOpenApiV2ProtobufContentType[] =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

std::string OpenApiV2Protobuf(const json::object& swagger);

}  // namespace flotilla::apiserver
