// JSON merge patch (RFC 7386), numeric-aware JSON equality, and ApplyPatch,
// which dispatches on the media type.
#include "api/patch.h"

namespace flotilla::api {
namespace {

// The media type without parameters, as kube-apiserver compares it.
std::string_view MediaType(std::string_view content_type) {
  size_t semi = content_type.find(';');
  std::string_view type = content_type.substr(0, semi);
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  return type;
}

// Merge patch values that land where the target has nothing: nulls inside
// objects are dropped (RFC 7386 section 2, "null" means remove).
json::value PruneNulls(const json::value& v) {
  if (!v.is_object()) return v;
  json::object out;
  for (const auto& [key, value] : v.get_object()) {
    if (!value.is_null()) out[key] = PruneNulls(value);
  }
  return out;
}

void MergeInto(json::object& target, const json::object& patch) {
  for (const auto& [key, value] : patch) {
    if (value.is_null()) {
      target.erase(key);
      continue;
    }
    json::value* existing = target.if_contains(key);
    if (value.is_object() && existing != nullptr && existing->is_object()) {
      MergeInto(existing->get_object(), value.get_object());
    } else {
      target[key] = PruneNulls(value);
    }
  }
}

// `target` with `patch` merged into it (RFC 7386).
json::object Merged(json::object target, const json::object& patch) {
  MergeInto(target, patch);
  return target;
}

bool IsNumber(const json::value& v) { return v.is_int64() || v.is_uint64() || v.is_double(); }

bool NumbersEqual(const json::value& a, const json::value& b) {
  if (a.is_double() || b.is_double()) {
    auto as_double = [](const json::value& v) {
      return v.is_double()  ? v.get_double()
             : v.is_int64() ? static_cast<double>(v.get_int64())
                            : static_cast<double>(v.get_uint64());
    };
    return as_double(a) == as_double(b);
  }
  if (a.is_int64() && b.is_int64()) return a.get_int64() == b.get_int64();
  if (a.is_uint64() && b.is_uint64()) return a.get_uint64() == b.get_uint64();
  const json::value& i = a.is_int64() ? a : b;
  const json::value& u = a.is_uint64() ? a : b;
  return i.get_int64() >= 0 && static_cast<uint64_t>(i.get_int64()) == u.get_uint64();
}

}  // namespace

bool JsonEqual(const json::value& a, const json::value& b) {
  if (IsNumber(a) && IsNumber(b)) return NumbersEqual(a, b);
  if (a.kind() != b.kind()) return false;
  if (a.is_array()) {
    const json::array& x = a.get_array();
    const json::array& y = b.get_array();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!JsonEqual(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.is_object()) return JsonEqual(a.get_object(), b.get_object());
  return a == b;
}

bool JsonEqual(const json::object& a, const json::object& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [key, value] : a) {
    const json::value* other = b.if_contains(key);
    if (other == nullptr || !JsonEqual(value, *other)) return false;
  }
  return true;
}

bool IsApplyPatch(std::string_view content_type) {
  return MediaType(content_type) == kApplyPatchContentType;
}

json::value MergePatch(const json::value& original, const json::value& patch) {
  if (!patch.is_object()) return patch;
  return Merged(original.is_object() ? original.get_object() : json::object(), patch.get_object());
}

StatusOr<json::value> ApplyPatch(std::string_view content_type, const json::object& original,
                                 std::string_view patch_body, const PatchInfoLookup& lookup) {
  std::string_view type = MediaType(content_type);
  bool json_patch = type == kJsonPatchContentType;
  bool merge_patch = type == kMergePatchContentType;
  bool strategic = type == kStrategicMergePatchContentType;
  if (type == kApplyPatchContentType) {
    return Status(Reason::kUnsupportedMediaType,
                  "application/apply-patch+yaml is server-side apply, which the field manager "
                  "applies, not a patch");
  }
  if (!json_patch && !merge_patch && !strategic) {
    return Status(Reason::kUnsupportedMediaType,
                  "the body of the request was in an unknown format - accepted media types "
                  "include: application/json-patch+json, application/merge-patch+json, "
                  "application/strategic-merge-patch+json");
  }
  FLOTILLA_ASSIGN_OR_RETURN(json::value patch, ParseJson(patch_body));
  if (!json_patch && !patch.is_object()) {
    return Status::BadRequest(std::string(merge_patch ? "merge" : "strategic merge") +
                              " patch must be a JSON object, got " +
                              std::string(JsonTypeName(patch)));
  }
  // Each way copies the object once, into the result it patches.
  auto patched = [&]() -> StatusOr<json::value> {
    if (json_patch) return JsonPatch(json::value(original), patch);
    if (strategic) return StrategicMergePatch(original, patch.get_object(), lookup);
    return json::value(Merged(original, patch.get_object()));
  };
  StatusOr<json::value> result = patched();
  if (result.ok() && !result->is_object()) {
    return Status::Invalid("the patched object must be a JSON object, got " +
                           std::string(JsonTypeName(*result)));
  }
  return result;
}

std::string StatusMergePatch(const json::value* old_status, const json::object& status) {
  json::object patch = status;
  if (old_status != nullptr && old_status->is_object()) {
    for (const auto& [field, value] : old_status->get_object()) {
      if (!patch.contains(field)) patch[field] = nullptr;
    }
  }
  return json::serialize(json::object{{"status", std::move(patch)}});
}

}  // namespace flotilla::api
