// CustomResourceDefinitions (apiextensions.k8s.io/v1) as data: a CRD read
// and validated the way kube-apiserver validates it (422 causes with the
// CRD's field paths), the names it claims, and the JSONPath of its printer
// columns. docs/crds.md says what is served and what is not.
//
// Every function is pure and thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/crd/structural.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::api::crd {

inline constexpr char kGroup[] = "apiextensions.k8s.io";
// What a CRD carries until its objects are gone.
inline constexpr char kCleanupFinalizer[] = "customresourcecleanup.apiextensions.k8s.io";

struct PrinterColumn {
  std::string name;
  std::string type;  // integer, number, string, boolean, date
  std::string format;
  std::string description;
  std::string json_path;
  int priority = 0;
};

struct Version {
  std::string name;
  bool served = false;
  bool storage = false;
  bool deprecated = false;
  std::string deprecation_warning;
  std::shared_ptr<const Schema> schema;
  json::value raw_schema;  // openAPIV3Schema as written
  bool status = false;     // the status subresource
  bool scale = false;      // the scale subresource, with its paths (dotted, no leading dot)
  std::string spec_replicas_path;
  std::string status_replicas_path;
  std::string label_selector_path;
  std::vector<PrinterColumn> columns;
};

struct Definition {
  std::string name;  // <plural>.<group>
  std::string group;
  std::string kind;
  std::string list_kind;
  std::string plural;
  std::string singular;
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<Version> versions;
  // status.storedVersions: the versions objects may be stored at.
  std::vector<std::string> stored_versions;

  const Version* StorageVersion() const;
};

// Reads and validates a CRD on create (`old` null) or update. Returns the
// definition, or the causes that make it invalid.
StatusOr<Definition> Read(const json::object& crd);
std::vector<StatusCause> Validate(const json::object& crd, const json::object* old);

// The names a definition claims in its group (plural, singular, short
// names, kind, list kind) that `other` (another CRD of the same group)
// claims too; empty when there is no conflict.
std::vector<std::string> ConflictingNames(const Definition& mine, const Definition& other);

// A printer column's simple JSONPath (".spec.replicas",
// ".status.conditions[0].type", ".metadata.labels.app") against `obj`;
// nullptr when a step is missing.
const json::value* Evaluate(const json::object& obj, std::string_view json_path);

}  // namespace flotilla::api::crd
