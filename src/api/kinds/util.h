// Helpers shared by the kind definitions in this folder: reading and
// defaulting fields of JSON objects, Go-style renderings of bad values for
// field errors, and the Table cells most kinds share. Internal to
// src/api/kinds; every function is pure and thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/registry.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::api::kinds {

using Causes = std::vector<StatusCause>;
using Cell = std::function<json::value(const json::object& obj, TimePoint now)>;

// ---- Reading. `path` is dotted ("spec.template.spec"); a missing step or a
// value of another type reads as absent. ----
const json::object& EmptyObject();
// o[key] as an object; EmptyObject() when absent or of another type.
const json::object& ObjectOr(const json::object& o, std::string_view key);
const json::object* ObjectAt(const json::object& o, std::string_view path);
const json::array* ArrayAt(const json::object& o, std::string_view path);
std::optional<int64_t> IntAt(const json::object& o, std::string_view path);
int64_t IntOr(const json::object& o, std::string_view path, int64_t fallback);
// Every element of the array at `path` that is an object, in order.
std::vector<const json::object*> ObjectsAt(const json::object& o, std::string_view path);

// ---- Defaulting, in place. ----
// o[key] as an object or array; nullptr when absent or of another type.
json::object* MutableObject(json::object& o, std::string_view key);
json::array* MutableArray(json::object& o, std::string_view key);
// Sets o[key] = v when the key is absent or null (an unset Go pointer).
void SetIfUnset(json::object& o, std::string_view key, json::value v);
// Same, also replacing "" (an unset Go string).
void SetIfEmpty(json::object& o, std::string_view key, std::string_view v);
// Calls fn on each object element of the array o[key].
void ForEachObject(json::object& o, std::string_view key,
                   const std::function<void(json::object&)>& fn);

// apimachinery's Semantic.DeepEqual seen through JSON: an absent field equals
// null and equals its zero value ("", 0, false, {}, []). Either may be null.
bool SemanticEqual(const json::value* a, const json::value* b);

// ---- Field paths and causes. ----
std::string Child(std::string_view path, std::string_view name);
std::string Index(std::string_view path, size_t i);
// "data[key]": a map entry, as field.Path.Key prints it.
std::string Key(std::string_view path, std::string_view key);
// validation.IsValidPortName: an IANA service name (at most 15 characters of
// [-a-z0-9], at least one letter, no "--", no leading or trailing '-').
std::vector<std::string> IsValidPortName(std::string_view port);
// A FieldValueInvalid cause whose bad value is already rendered.
StatusCause InvalidRepr(std::string field, std::string_view repr, std::string_view detail);
// ValidateNonnegativeField on o[key] when it is an integer.
void CheckNonnegative(const json::object& o, std::string_view key, const std::string& path,
                      Causes& out);

// Go's %#v of values that Kubernetes messages print: a map[string]string, a
// []string and a metav1.LabelSelector (null/absent prints as Go's nil form).
std::string GoStringMap(const json::value* m);
std::string GoStringSlice(const json::value* a);
std::string GoLabelSelector(const json::value* selector);

// ---- Table cells (pkg/printers/internalversion). ----
TableColumn NameColumn();
TableColumn AgeColumn();
// A cell holding the string at `path` ("" when absent).
Cell StringCell(std::string path);
// A cell holding the integer at `path` (0 when absent).
Cell IntCell(std::string path);
TableColumn Column(std::string name, std::string type, std::string description, int priority,
                   Cell cell);
// translateTimestampSince: "<unknown>" for an absent or unparsable time.
std::string TimestampSince(const json::value* rfc3339, TimePoint now);
// labels.FormatLabels: "a=b,c=d" sorted by key, "<none>" when empty.
std::string FormatLabels(const json::object* labels);
// metav1.FormatLabelSelector: "<none>" for an empty selector, "<error>" for
// an invalid one.
std::string FormatLabelSelector(const json::value* selector);
// layoutContainerCells: container names and images joined by ",".
std::pair<std::string, std::string> ContainerCells(const json::object* pod_spec);
// The wide CONTAINERS and IMAGES columns of a workload: the container
// names and images of the pod spec at `pod_spec_path`.
TableColumn ContainersColumn(std::string pod_spec_path = "spec.template.spec");
TableColumn ImagesColumn(std::string pod_spec_path = "spec.template.spec");
// A resource.Quantity as it serializes (JSON numbers become their text).
std::string QuantityString(const json::value* q);

}  // namespace flotilla::api::kinds
