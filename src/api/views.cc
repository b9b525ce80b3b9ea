#include "api/views.h"

#include "api/conditions.h"

namespace flotilla::api {
namespace {

const json::object* ObjectOf(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

bool Deleting(const json::object* meta) {
  const json::value* ts = meta != nullptr ? meta->if_contains("deletionTimestamp") : nullptr;
  return ts != nullptr && !ts->is_null() && !(ts->is_string() && ts->get_string().empty());
}

}  // namespace

bool IsBeingDeleted(const json::object& obj) { return Deleting(ObjectOf(obj, "metadata")); }

ObjectView::ObjectView(const json::object& obj)
    : obj_(&obj),
      meta_(ObjectOf(obj, "metadata")),
      spec_(ObjectOf(obj, "spec")),
      status_(ObjectOf(obj, "status")) {}

bool ObjectView::HasFinalizer(std::string_view finalizer) const {
  const json::array* all = finalizers();
  if (all == nullptr) return false;
  for (const json::value& f : *all) {
    if (f.is_string() && f.get_string() == finalizer) return true;
  }
  return false;
}

bool ObjectView::deleting() const { return Deleting(meta_); }

std::string_view ObjectView::condition_status(std::string_view type) const {
  const json::object* c = status_ != nullptr ? FindCondition(*status_, type) : nullptr;
  return String(c, "status");
}

bool ObjectView::Bool(const json::object* o, std::string_view key) {
  const json::value* v = o != nullptr ? o->if_contains(key) : nullptr;
  return v != nullptr && v->is_bool() && v->get_bool();
}

std::string_view ObjectView::String(const json::object* o, std::string_view key) {
  const json::value* v = o != nullptr ? o->if_contains(key) : nullptr;
  return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

int64_t ObjectView::Int(const json::object* o, std::string_view key, int64_t absent) {
  const json::value* v = o != nullptr ? o->if_contains(key) : nullptr;
  if (v == nullptr) return absent;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  return absent;
}

const json::object* ObjectView::Object(const json::object* o, std::string_view key) {
  return o != nullptr ? ObjectOf(*o, key) : nullptr;
}

const json::array* ObjectView::Array(const json::object* o, std::string_view key) {
  const json::value* v = o != nullptr ? o->if_contains(key) : nullptr;
  return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
}

}  // namespace flotilla::api
