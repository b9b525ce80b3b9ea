// Objects: list (selectors, limit/continue) and the scale subresource.
#include "api/fields.h"
#include "api/labels.h"
#include "apiserver/meta.h"
#include "apiserver/objects.h"
#include "base/base64.h"

namespace flotilla::apiserver {
namespace {

std::string EncodeContinue(int64_t rev, std::string_view last_key, std::string_view prefix) {
  json::object o{{"v", "meta.k8s.io/v1"}, {"rv", rev}, {"start", last_key.substr(prefix.size())}};
  return Base64Encode(json::serialize(o));
}

// Sets where the next page starts and the revision the list is read at.
Status DecodeContinue(const std::string& token, std::string_view prefix,
                      storage::ListOptions& page) {
  auto raw = Base64Decode(token);
  auto parsed = raw ? ParseJsonObject(*raw) : StatusOr<json::object>(Status::BadRequest(""));
  auto start = parsed.ok() ? GetString(*parsed, "start") : std::nullopt;
  const json::value* rv = parsed.ok() ? parsed->if_contains("rv") : nullptr;
  if (!start || start->find("..") != std::string_view::npos || rv == nullptr || !rv->is_int64() ||
      rv->get_int64() < 0) {
    return Status::BadRequest("continue key is not valid: " + token);
  }
  page.start_after = std::string(prefix) + std::string(*start);
  page.revision = rv->get_int64();
  return Status::Ok();
}

// kube-apiserver's words for a continue token whose revision was compacted.
Status ContinueExpired() {
  return Status::Expired(
      "The provided continue parameter is too old to display a consistent list result. You can "
      "start a new list without the continue parameter, or use the continue token in this "
      "response to retrieve the remainder of the results. Continuing with the provided token "
      "results in an inconsistent list - objects that were created, modified, or deleted "
      "between the time the first chunk was returned and now may show up in the list.");
}

StatusOr<storage::ListResult> ListChunk(storage::Store& store, const std::string& prefix,
                                        const storage::ListOptions& page) {
  auto chunk = store.List(prefix, page);
  if (!chunk.ok() && page.revision > 0 && chunk.status().Is(Reason::kExpired)) {
    return ContinueExpired();
  }
  return chunk;
}

// Field values for field selectors: metadata.name, metadata.namespace and any
// dotted path to a scalar ("status.phase", "spec.nodeName", "type").
std::optional<std::string> FieldValue(const json::object& obj, std::string_view field) {
  const json::value* v = Find(obj, field);
  if (v == nullptr) return std::string();
  if (v->is_string()) return std::string(v->get_string());
  if (v->is_bool()) return std::string(v->get_bool() ? "true" : "false");
  if (v->is_number()) return json::serialize(*v);
  return std::nullopt;
}

}  // namespace

namespace {

// The keys a list reads: the namespace's (or the kind's), or, as
// kube-apiserver does for a selector that pins the name (MatchesSingle),
// only those that begin with that name, so that `kubectl wait`, `rollout
// status` and `get NAME --watch` do not read every object of the namespace.
// The selector is still applied to each (another name may begin with it).
std::string ListPrefix(const api::Resource& res, const std::string& ns,
                       const api::FieldSelector& fields) {
  std::optional<std::string> name = fields.RequiresExactMatch("metadata.name");
  if (!name || name->empty()) return Objects::Prefix(res, ns);
  if (!res.namespaced) return Objects::Key(res, "", *name);
  std::string pinned_ns =
      ns.empty() ? fields.RequiresExactMatch("metadata.namespace").value_or("") : ns;
  return pinned_ns.empty() ? Objects::Prefix(res, ns) : Objects::Key(res, pinned_ns, *name);
}

}  // namespace

StatusOr<ListPage> Objects::List(const api::Resource& res, const std::string& ns,
                                 const ListOptions& opts) {
  FLOTILLA_ASSIGN_OR_RETURN(api::LabelSelector labels,
                            api::LabelSelector::Parse(opts.label_selector));
  FLOTILLA_ASSIGN_OR_RETURN(api::FieldSelector fields,
                            api::FieldSelector::Parse(opts.field_selector));
  const std::string prefix = ListPrefix(res, ns, fields);
  storage::ListOptions page;
  if (!opts.continue_token.empty()) {
    FLOTILLA_RETURN_IF_ERROR(DecodeContinue(opts.continue_token, prefix, page));
  }
  ListPage out;
  const bool filtering = !labels.Empty() || !fields.Empty();
  out.raw = opts.allow_raw && !filtering && res.StoredAsServed();
  page.limit = opts.limit > 0 ? (filtering ? std::max<int64_t>(opts.limit, 500) : opts.limit) : 0;
  page.shared = out.raw;
  if (out.raw) {
    // The stored records themselves: no copy, no decoding. Without a
    // selector the store's limit is the page's.
    FLOTILLA_ASSIGN_OR_RETURN(storage::ListResult chunk, ListChunk(store_, prefix, page));
    out.revision = chunk.revision;
    out.raw_items = std::move(chunk.shared_items);
    if (chunk.more && !out.raw_items.empty()) {
      out.continue_token = EncodeContinue(out.revision, out.raw_items.back()->key, prefix);
      out.remaining = chunk.remaining;
    }
    return out;
  }
  std::string last_key;
  for (;;) {
    FLOTILLA_ASSIGN_OR_RETURN(storage::ListResult chunk, ListChunk(store_, prefix, page));
    if (out.revision == 0) out.revision = chunk.revision;
    page.revision = out.revision;  // every chunk of one page at one revision
    for (auto& kv : chunk.items) {
      json::object obj = ParseStored(kv.value);
      const json::object* meta = FindMeta(obj);
      const json::object* lbls = meta ? GetObject(*meta, "labels") : nullptr;
      if (!labels.Matches(lbls)) continue;
      if (!fields.Matches([&](std::string_view f) { return FieldValue(obj, f); })) continue;
      FLOTILLA_ASSIGN_OR_RETURN(json::object converted, FromStorage(res, std::move(obj)));
      out.items.push_back(std::move(converted));
      last_key = kv.key;
      if (opts.limit > 0 && static_cast<int64_t>(out.items.size()) >= opts.limit) {
        bool more = chunk.more || &kv != &chunk.items.back();
        if (more) out.continue_token = EncodeContinue(out.revision, last_key, prefix);
        // As kube-apiserver: a count only without selectors, where it is exact.
        if (more && !filtering) out.remaining = chunk.remaining + (&chunk.items.back() - &kv);
        return out;
      }
    }
    if (!chunk.more || page.limit == 0) break;
    page.start_after = chunk.items.empty() ? page.start_after : chunk.items.back().key;
  }
  return out;
}

StatusOr<json::object> Objects::GetScale(const api::Resource& res, const std::string& ns,
                                         const std::string& name) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object obj, Get(res, ns, name));
  json::object meta;
  for (const char* f : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    std::string v = MetaString(obj, f);
    if (!v.empty()) meta[f] = v;
  }
  const json::value* spec_replicas = Find(obj, res.scale_spec_path);
  const json::value* status_replicas = Find(obj, res.scale_status_path);
  json::object status{{"replicas", status_replicas ? *status_replicas : json::value(0)}};
  const json::value* sel =
      res.scale_selector_path.empty() ? nullptr : Find(obj, res.scale_selector_path);
  if (sel != nullptr && sel->is_object()) {
    auto selector = api::LabelSelector::FromJson(sel, res.scale_selector_path);
    if (selector.ok()) status["selector"] = selector->ToString();
  } else if (sel != nullptr && sel->is_string()) {
    status["selector"] = *sel;
  }
  return json::object{{"kind", "Scale"},
                      {"apiVersion", "autoscaling/v1"},
                      {"metadata", std::move(meta)},
                      {"spec", {{"replicas", spec_replicas ? *spec_replicas : json::value(0)}}},
                      {"status", std::move(status)}};
}

StatusOr<json::object> Objects::UpdateScale(const api::Resource& res, const std::string& ns,
                                            const std::string& name, json::object scale,
                                            const WriteOptions& opts) {
  const json::value* replicas = Find(scale, "spec.replicas");
  if (replicas != nullptr && !replicas->is_int64() && !replicas->is_uint64()) {
    return Status::BadRequest("Scale.spec.replicas must be an integer");
  }
  int64_t want = replicas ? replicas->to_number<int64_t>() : 0;
  if (want < 0) {
    return Status::Invalid(
        "Scale.autoscaling \"" + name + "\" is invalid: spec.replicas: Invalid value: " +
            std::to_string(want) + ": must be greater than or equal to 0",
        {{"FieldValueInvalid",
          "Invalid value: " + std::to_string(want) + ": must be greater than or equal to 0",
          "spec.replicas"}});
  }
  int64_t want_rv = ResourceVersionOf(scale);
  Transform transform = [&](const json::object& current) -> StatusOr<json::object> {
    if (want_rv != 0 && want_rv != ResourceVersionOf(current)) {
      return ConflictError(res, name,
                           "the object has been modified; please apply your changes "
                           "to the latest version and try again");
    }
    json::object updated = current;
    SetAt(updated, res.scale_spec_path, want);
    return PrepareUpdate(res, current, std::move(updated), "", opts, {"scale"});
  };
  FLOTILLA_RETURN_IF_ERROR(GuaranteedUpdate(res, ns, name, transform, want_rv == 0, opts).status());
  return GetScale(res, ns, name);
}

}  // namespace flotilla::apiserver
