// Reading an object's annotations (metadata.annotations) and labels, for
// the code that acts on the federation's annotations and labels and the
// apiserver's own. Pure.
#pragma once

#include <string>
#include <string_view>

#include "base/json.h"

namespace flotilla::api {

// The annotation `key` of `obj` as stored (of any JSON type); nullptr when
// absent or when metadata.annotations is not an object.
inline const json::value* FindAnnotation(const json::object& obj, std::string_view key) {
  const json::value* annotations = Find(obj, "metadata.annotations");
  if (annotations == nullptr || !annotations->is_object()) return nullptr;
  return annotations->get_object().if_contains(key);
}

// The annotation `key` of `obj`; "" when absent or not a string.
inline std::string AnnotationAt(const json::object& obj, std::string_view key) {
  const json::value* v = FindAnnotation(obj, key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The label `key` of `obj`; "" when absent or not a string.
inline std::string LabelAt(const json::object& obj, std::string_view key) {
  const json::value* labels = Find(obj, "metadata.labels");
  if (labels == nullptr || !labels->is_object()) return "";
  const json::value* v = labels->get_object().if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace flotilla::api
