// The Client: how controllers and tools talk to a Kubernetes API (DESIGN
// §2). Two implementations share these semantics exactly (same errors, same
// resourceVersions): a REST client configured from a kubeconfig
// (NewRestClient) and an in-process client that calls an ApiServer's Objects
// without HTTP (NewInProcessClient).
//
// Objects are JSON documents (json::object). Errors are the server's Status:
// reason, code, message and causes, so callers branch on NotFound,
// AlreadyExists, Conflict, Gone/Expired, Invalid.
//
// Thread-safe: one Client may be used from many threads. Requests that
// cannot be valid are refused before anything is sent, as client-go refuses
// them (BadRequest): an empty name where one is needed, a name, namespace or
// subresource that is "." or ".." or contains '/' or '%'.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::client {

// Which resource: group ("" for core), version, plural; namespaced or not.
struct ResourceRef {
  std::string group;
  std::string version;
  std::string resource;  // plural, e.g. "deployments"
  bool namespaced = true;

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;        // "" = most recent
  std::string resource_version_match;  // "", "NotOlderThan", "Exact"
  int64_t limit = 0;
  std::string continue_token;
  // How long the call may last, sent as timeoutSeconds (0: not sent). The
  // transport waits that long for the answer, when its own timeout is
  // shorter: a list of a large collection takes longer than a write.
  int64_t timeout_seconds = 0;
};

struct ObjectList {
  std::vector<json::object> items;
  std::string resource_version;
  std::string continue_token;
  // metadata.remainingItemCount: the objects past a limited page (-1: the
  // server did not say).
  int64_t remaining_item_count = -1;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // "" or "0": current objects first as ADDED
  bool allow_bookmarks = true;
  int timeout_seconds = 0;  // 0 = server default
  // The consumer takes events whose object is WatchEvent::shared: from a
  // server in this process, an object as its writer stored it, shared with
  // the server's other watchers, without a parse or a copy. Otherwise
  // every event's object is WatchEvent::object.
  bool shared_objects = false;
};

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  json::object object;  // for kError the metav1.Status; empty when `shared` is set
  // With WatchOptions::shared_objects, the object when the server shared
  // it (never modified: copy it to change it); null otherwise.
  std::shared_ptr<const json::object> shared;

  // The event's object, wherever it is.
  const json::object& Object() const { return shared ? *shared : object; }
};

// An open watch. Events are delivered to the callback given to Watch, in
// order, on a thread owned by the Watch. The stream ends when the server
// closes it, on an error (delivered as kError or through `done`), or Stop().
//
// StartWatch returns an error, and no callback ever runs, when the server
// refuses the watch (unknown resource, bad selector, not allowed) or cannot
// be reached. An ERROR event in the stream (e.g. Expired, 410, for a
// resourceVersion too old) is delivered as kError and then ends the stream
// with that Status through `done`. A stream the server closes (its timeout,
// a restart) ends with OK: resume from LastResourceVersion().
// Destroying a Watch stops it. It may be destroyed from its `done` callback,
// not from its event callback.
class Watch {
 public:
  virtual ~Watch() = default;
  // Stops the stream; no callback runs after it returns (when called from
  // the event callback, `done` follows once that callback returns).
  // Idempotent.
  virtual void Stop() = 0;
  // The resourceVersion of the last event seen, bookmarks included ("" before
  // any); during a callback, that event's.
  virtual std::string LastResourceVersion() const = 0;
};

// Takes the event by value: the stream hands over an event it decoded, so a
// consumer that keeps the object (an informer's cache) moves it instead of
// copying it. A callback taking `const WatchEvent&` fits too.
using WatchCallback = std::function<void(WatchEvent event)>;
// Called once when the stream ends (OK when closed normally or by Stop()).
using WatchDone = std::function<void(const Status& status)>;

enum class PatchType { kMerge, kJson, kStrategic };

struct DeleteOptions {
  std::string propagation_policy;  // "", "Orphan", "Background", "Foreground"
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<int64_t> grace_period_seconds;
};

class Client {
 public:
  virtual ~Client() = default;

  virtual StatusOr<json::object> Get(const ResourceRef& res, const std::string& ns,
                                     const std::string& name) = 0;
  virtual StatusOr<ObjectList> List(const ResourceRef& res, const std::string& ns,
                                    const ListOptions& opts) = 0;
  virtual StatusOr<std::unique_ptr<Watch>> StartWatch(const ResourceRef& res, const std::string& ns,
                                                      const WatchOptions& opts,
                                                      WatchCallback on_event,
                                                      WatchDone on_done) = 0;
  // Create, Update and UpdateStatus: an empty `ns` means the object's
  // metadata.namespace; Update and UpdateStatus write to metadata.name.
  virtual StatusOr<json::object> Create(const ResourceRef& res, const std::string& ns,
                                        const json::object& obj) = 0;
  virtual StatusOr<json::object> Update(const ResourceRef& res, const std::string& ns,
                                        const json::object& obj) = 0;
  virtual StatusOr<json::object> UpdateStatus(const ResourceRef& res, const std::string& ns,
                                              const json::object& obj) = 0;
  virtual StatusOr<json::object> Patch(const ResourceRef& res, const std::string& ns,
                                       const std::string& name, PatchType type,
                                       const std::string& patch,
                                       const std::string& subresource = "") = 0;
  virtual Status Delete(const ResourceRef& res, const std::string& ns, const std::string& name,
                        const DeleteOptions& opts = {}) = 0;
  // autoscaling/v1 Scale of a workload; `replicas` >= 0 sets it.
  virtual StatusOr<json::object> GetScale(const ResourceRef& res, const std::string& ns,
                                          const std::string& name) = 0;
  virtual StatusOr<json::object> UpdateScale(const ResourceRef& res, const std::string& ns,
                                             const std::string& name, int64_t replicas) = 0;
  // POST `body` to a subresource of an object, e.g. a v1 Binding to
  // pods/NAME/binding; returns what the server answers (for a binding, a
  // Success Status). Clients that cannot do it answer MethodNotAllowed.
  virtual StatusOr<json::object> CreateSubresource(const ResourceRef& res, const std::string& ns,
                                                   const std::string& name,
                                                   const std::string& subresource,
                                                   const json::object& body) {
    (void)res, (void)ns, (void)name, (void)body;
    return Status(Reason::kMethodNotAllowed,
                  "this client does not create the " + subresource + " subresource");
  }
};

}  // namespace flotilla::client
