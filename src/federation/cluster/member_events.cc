// The members' pod Events on the federation (member_events.h).
#include "federation/cluster/member_events.h"

#include <algorithm>
#include <utility>

#include "api/federated.h"
#include "api/hash.h"
#include "api/managed_fields.h"
#include "api/views.h"
#include "base/log.h"
#include "federation/common/federated_kind.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {
namespace {

using client::kEvents;

constexpr size_t kMaxName = 253;

// What the member's Events carry that a copy keeps besides their fields.
constexpr std::string_view kKeptMetadata[] = {"labels", "annotations"};

bool Empty(const json::value* v) {
  return v == nullptr || v->is_null() || (v->is_string() && v->get_string().empty()) ||
         (v->is_object() && v->get_object().empty());
}

bool Same(const json::value* a, const json::value* b) {
  if (Empty(a) || Empty(b)) return Empty(a) && Empty(b);
  return *a == *b;
}

// Whether `a` has a field (but metadata, apiVersion and kind) that `b`
// holds otherwise.
bool FieldsDiffer(const json::object& a, const json::object& b) {
  for (const auto& [key, value] : a) {
    if (key == "metadata" || key == "apiVersion" || key == "kind") continue;
    if (!Same(&value, b.if_contains(key))) return true;
  }
  return false;
}

}  // namespace

std::string EventCopyName(const std::string& name, const std::string& cluster) {
  std::string full = name + "." + cluster;
  if (full.size() <= kMaxName) return full;
  // A DNS-1123 subdomain still: the hash is lowercase letters and digits.
  std::string hash = api::SafeEncodeString(std::to_string(api::Fnv1a64(full)));
  std::string head = full.substr(0, kMaxName - hash.size() - 1);
  while (!head.empty() && (head.back() == '.' || head.back() == '-')) head.pop_back();
  return head + "." + hash;
}

json::object EventCopy(const json::object& event, const std::string& cluster) {
  json::object copy;
  for (const auto& [key, value] : event) {
    if (key != "metadata") copy[key] = value;
  }
  copy["apiVersion"] = "v1";
  copy["kind"] = "Event";
  api::ObjectView view(event);
  json::object meta{{"name", EventCopyName(std::string(view.name()), cluster)},
                    {"namespace", std::string(view.ns())}};
  if (const json::object* from = GetObject(event, "metadata")) {
    for (std::string_view field : kKeptMetadata) {
      const json::value* v = from->if_contains(field);
      if (v != nullptr && v->is_object()) meta[field] = *v;
    }
  }
  EnsureObject(meta, "labels")[api::kMemberClusterLabel] = cluster;
  copy["metadata"] = std::move(meta);
  return copy;
}

json::object CompactEvent(const json::object& event) {
  const json::object* meta = GetObject(event, "metadata");
  if (meta == nullptr) return event;
  if (event.size() == 2 && event.contains("event")) return event;  // compact already
  json::object kept;
  for (std::string_view field : {"name", "namespace", "uid", "resourceVersion"}) {
    if (const json::value* v = meta->if_contains(field)) kept.emplace(field, *v);
  }
  return json::object{{"metadata", std::move(kept)},
                      {"event", json::serialize(api::WithoutManagedFields(event))}};
}

json::object CachedEvent(const json::object& cached) {
  const json::value* text = cached.if_contains("event");
  if (text == nullptr || !text->is_string()) return cached;
  StatusOr<json::object> event = ParseJsonObject(text->get_string());
  return event.ok() ? std::move(*event) : cached;
}

bool EventCopyDiffers(const json::object& current, const json::object& desired) {
  if (FieldsDiffer(desired, current) || FieldsDiffer(current, desired)) return true;
  const json::object* now = GetObject(current, "metadata");
  const json::object* want = GetObject(desired, "metadata");
  for (std::string_view field : kKeptMetadata) {
    if (!Same(now ? now->if_contains(field) : nullptr, want ? want->if_contains(field) : nullptr)) {
      return true;
    }
  }
  return false;
}

MemberEventsController::MemberEventsController(FederationContext& ctx, MemberEventsOptions options)
    : ctx_(ctx), written_(options.remembered) {
  controller_ =
      &ctx.manager().AddController(kName, std::max(1, options.workers),
                                   [this](const std::string& key) { return Reconcile(key); });
  // Only the Events about pods, each kept as one string.
  ctx.members().SetFieldSelector(kEvents, "involvedObject.kind=Pod");
  ctx.members().SetTransform(kEvents, CompactEvent);
  handler_ = ctx.members().AddHandler(kEvents, [this](const std::string& cluster) {
    auto changed = [this, cluster](const runtime::ObjectPtr& event) {
      api::ObjectView view(*event);
      controller_->queue().Add(cluster + "/" + std::string(view.ns()) + "/" +
                               std::string(view.name()));
    };
    return runtime::EventHandler{
        .on_add = changed,
        .on_update = [changed](const runtime::ObjectPtr&,
                               const runtime::ObjectPtr& event) { changed(event); },
        .on_delete = changed};
  });
}

MemberEventsController::~MemberEventsController() { ctx_.members().RemoveHandler(handler_); }

StatusOr<runtime::Result> MemberEventsController::Reconcile(const std::string& key) {
  size_t first = key.find('/');
  size_t second = key.find('/', first + 1);
  if (first == std::string::npos || second == std::string::npos) return runtime::Result{};
  std::string cluster = key.substr(0, first);
  std::string ns = key.substr(first + 1, second - first - 1);
  std::string name = key.substr(second + 1);
  std::shared_ptr<runtime::Informer> events = ctx_.members().Get(cluster, kEvents);
  // A cluster that is not Ready now: its copies stay until they expire.
  if (events == nullptr) return runtime::Result{};
  const std::string copy_name = EventCopyName(name, cluster);
  const std::string copy_key = ns + "/" + copy_name;
  runtime::ObjectPtr event = events->lister().Get(ns, name);
  if (event == nullptr) {
    {
      MutexLock lock(written_mu_);
      written_.Erase(copy_key);
    }
    Status deleted = ctx_.fed().Delete(kEvents, ns, copy_name);
    if (deleted.ok() || deleted.Is(Reason::kNotFound)) return runtime::Result{};
    return deleted;
  }
  std::string from(api::ObjectView(*event).resource_version());
  std::string written;
  {
    MutexLock lock(written_mu_);
    if (const Written* w = written_.Find(copy_key)) {
      if (!from.empty() && w->from == from) return runtime::Result{};
      written = w->copy;
    }
  }
  StatusOr<std::string> copy = Write(EventCopy(CachedEvent(*event), cluster), written);
  MutexLock lock(written_mu_);
  if (!copy.ok() || copy->empty()) {
    written_.Erase(copy_key);  // the next try reads, or creates, what is there
  } else {
    written_.Put(copy_key, Written{std::move(from), std::move(*copy)});
  }
  if (!copy.ok()) return copy.status();
  return runtime::Result{};
}

StatusOr<std::string> MemberEventsController::Write(json::object desired,
                                                    const std::string& written) {
  client::Client& fed = ctx_.fed();
  api::ObjectView view(desired);
  const std::string ns(view.ns());
  const std::string name(view.name());
  auto rv = [](const json::object& o) {
    return std::string(api::ObjectView(o).resource_version());
  };
  bool create = written.empty();
  if (!create) {
    // An update from what was written last. The copy gone (expired,
    // deleted) is made again; written by anyone else since, it is read.
    json::object updated = desired;
    updated["metadata"].as_object()["resourceVersion"] = written;
    auto put = fed.Update(kEvents, ns, updated);
    if (put.ok()) return rv(*put);
    create = put.status().Is(Reason::kNotFound);
    if (!create && !put.status().Is(Reason::kConflict)) return put.status();
  }
  if (create) {
    auto created = fed.Create(kEvents, ns, desired);
    if (created.ok()) return rv(*created);
    if (!created.status().Is(Reason::kAlreadyExists)) {
      // No such namespace here (or it is going), or an Event the federation
      // would not take: nothing to retry.
      spdlog::debug("member event copy {}/{} is not written: {}", ns, name,
                    created.status().ToString());
      return std::string();
    }
  }
  auto current = fed.Get(kEvents, ns, name);
  if (!current.ok()) {
    if (!current.status().Is(Reason::kNotFound)) return current.status();
    // Expired or deleted since: create it again on the next try.
    return Status::Conflict("event copy " + ns + "/" + name + " went while it was written");
  }
  if (!EventCopyDiffers(*current, desired)) return rv(*current);
  desired["metadata"].as_object()["resourceVersion"] = rv(*current);
  FLOTILLA_ASSIGN_OR_RETURN(json::object updated, fed.Update(kEvents, ns, desired));
  return rv(updated);
}

}  // namespace flotilla::federation::cluster

namespace flotilla::federation {

void RegisterMemberEvents(KindRegistry& kinds) {
  kinds.Add({.controller = cluster::MemberEventsController::kName,
             .help = "the members' Events about their pods, copied into the federation (kubectl "
                     "describe pod and get events there)",
             .build = [](const KindEnv& env) {
               return std::make_shared<cluster::MemberEventsController>(env.ctx);
             }});
}

}  // namespace flotilla::federation
