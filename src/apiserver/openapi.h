// The documents of the /openapi endpoints, built once from the registry of
// kinds and their schemas, in the shape kube-apiserver serves them:
//
//  - /openapi/v2: one Swagger 2.0 document (JSON) with every path and
//    definition;
//  - /openapi/v3: an index {"paths": {"api/v1": {"serverRelativeURL":
//    "/openapi/v3/api/v1?hash=<HASH>"}, "apis/apps/v1": ...}};
//  - /openapi/v3/<gv path>: one self-contained OpenAPI 3.0 document per
//    group-version, with components.schemas ("#/components/schemas/..."),
//    x-kubernetes-group-version-kind on kinds and operations and
//    x-kubernetes-action on operations.
//
// What kubectl 1.32 reads from them: `explain` finds the resource's kind
// through the operations of its paths and renders the matching schema;
// `apply` and `create` trust the server to validate fields when the PATCH
// operation of the kind lists the fieldValidation parameter, and compute
// strategic merge patches from the schemas' x-kubernetes-patch-* extensions
// when that operation accepts application/strategic-merge-patch+json.
// HASH is the upper-case hex SHA-512 of the document, as kube-apiserver
// computes it, so a client may cache a document by its URL. See
// docs/openapi.md.
//
// Immutable once constructed; every method is thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "api/registry.h"
#include "api/schema.h"

namespace flotilla::apiserver {

class OpenApi {
 public:
  // Builds every document. Resources whose schema_name the set lacks are
  // still listed, with an object schema of their kind.
  OpenApi(const api::Registry& registry, const api::SchemaSet& schemas);

  // The Swagger 2.0 document, JSON.
  const std::string& V2() const { return v2_; }
  // The same in protobuf (openapi_proto.h), made on first use.
  const std::string& V2Protobuf() const;
  // The /openapi/v3 index, JSON.
  const std::string& V3Index() const { return v3_index_; }
  // The OpenAPI 3.0 document of a group-version path ("api/v1",
  // "apis/apps/v1"; a query string or trailing slash is ignored); nullptr
  // when no resource of the registry is in that group-version.
  const std::string* V3(std::string_view gv_path) const;
  // The hash of that document; "" for an unknown path.
  const std::string& V3Hash(std::string_view gv_path) const;

 private:
  struct Document {
    std::string json;
    std::string hash;
  };
  const Document* Find(std::string_view gv_path) const;

  std::string v2_;
  mutable std::once_flag v2_protobuf_once_;
  mutable std::string v2_protobuf_;
  std::string v3_index_;
  std::map<std::string, Document, std::less<>> v3_;
};

// Appends the definition names `v` refers to ("#/definitions/NAME").
void CollectDefinitionRefs(const json::value& v, std::vector<std::string>& out);

}  // namespace flotilla::apiserver
