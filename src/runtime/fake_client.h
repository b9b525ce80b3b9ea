// FakeClient: an in-memory client::Client for runtime and controller tests.
//
// It keeps objects per resource with one resourceVersion counter across all
// of them, as the API server does: every write gets the next resourceVersion
// and is appended to a bounded history that watches resume from. It checks
// what controllers rely on: AlreadyExists on create, NotFound, Conflict on a
// stale resourceVersion in an update or a delete precondition, label and
// field (metadata.name, metadata.namespace) selectors on list and watch, and
// 410 Expired for a watch from a compacted resourceVersion (an ERROR event
// carrying the Status, then `done` with it, as the REST client reports it).
// Merge and JSON patches apply as on the server; a strategic merge patch
// applies without per-field strategies (maps merge, lists replace).
//
// Watches deliver their events in order on one thread per watch. Tests steer
// them: PauseWatches/ResumeWatches hold events back, ExpireWatches ends every
// watch with a 410 (dropping what it had not delivered), BreakWatches ends
// them as a broken stream, CloseWatches as a server timeout; InjectError
// makes the next calls of a verb fail. Every call is recorded as an Action
// so tests can state the writes they expect.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "client/client.h"

namespace flotilla::runtime {

class FakeClient : public client::Client {
 public:
  enum class Verb { kGet, kList, kWatch, kCreate, kUpdate, kPatch, kDelete };

  struct Action {
    Verb verb;
    std::string resource;  // plural, e.g. "configmaps"
    std::string ns;
    std::string name;
    std::string body;  // the patch for kPatch; the object sent for kCreate/kUpdate
  };

  // `clock` stamps creationTimestamp. History keeps the last
  // `history_limit` writes for watches to resume from.
  explicit FakeClient(Clock& clock, size_t history_limit = 10000);
  ~FakeClient() override;

  StatusOr<json::object> Get(const client::ResourceRef& res, const std::string& ns,
                             const std::string& name) override;
  StatusOr<client::ObjectList> List(const client::ResourceRef& res, const std::string& ns,
                                    const client::ListOptions& opts) override;
  StatusOr<std::unique_ptr<client::Watch>> StartWatch(const client::ResourceRef& res,
                                                      const std::string& ns,
                                                      const client::WatchOptions& opts,
                                                      client::WatchCallback on_event,
                                                      client::WatchDone on_done) override;
  StatusOr<json::object> Create(const client::ResourceRef& res, const std::string& ns,
                                const json::object& obj) override;
  StatusOr<json::object> Update(const client::ResourceRef& res, const std::string& ns,
                                const json::object& obj) override;
  StatusOr<json::object> UpdateStatus(const client::ResourceRef& res, const std::string& ns,
                                      const json::object& obj) override;
  StatusOr<json::object> Patch(const client::ResourceRef& res, const std::string& ns,
                               const std::string& name, client::PatchType type,
                               const std::string& patch,
                               const std::string& subresource = "") override;
  Status Delete(const client::ResourceRef& res, const std::string& ns, const std::string& name,
                const client::DeleteOptions& opts = {}) override;
  StatusOr<json::object> GetScale(const client::ResourceRef& res, const std::string& ns,
                                  const std::string& name) override;
  StatusOr<json::object> UpdateScale(const client::ResourceRef& res, const std::string& ns,
                                     const std::string& name, int64_t replicas) override;

  // The next `times` calls of `verb` fail with `status` (after any already
  // injected for that verb). For kWatch the StartWatch call itself fails.
  void InjectError(Verb verb, Status status, int times = 1);
  // Holds back watch events (they queue up) until ResumeWatches.
  void PauseWatches();
  void ResumeWatches();
  // Forgets the history up to now, then ends every open watch with an ERROR
  // event carrying 410 Expired (and `done` with it), dropping the events it
  // had not delivered.
  void ExpireWatches();
  // Ends every open watch after what it has delivered, as a dropped
  // connection: `done` gets ServiceUnavailable.
  void BreakWatches();
  // Ends every open watch after what it has delivered, as the server does
  // at a watch's timeout: `done` gets OK.
  void CloseWatches();
  // Forgets the history up to now: a watch from an older resourceVersion
  // gets 410.
  void Compact();

  std::vector<Action> Actions() const;
  void ClearActions();
  // The current resourceVersion (that of the last write).
  int64_t ResourceVersion() const;
  // Watches started and not yet ended.
  int OpenWatches() const;

 private:
  struct Sink;
  class FakeWatch;
  struct HistoryEntry {
    int64_t rv;
    std::string resource;  // ResourceKey()
    client::WatchEvent::Type type;
    std::optional<json::object> old;  // before the write; null on create
    json::object object;
  };
  using ObjectMap = std::map<std::string, json::object>;  // "ns/name" -> object

  static std::string ResourceKey(const client::ResourceRef& res);
  Status TakeInjected(Verb verb);
  void Record(Verb verb, const client::ResourceRef& res, const std::string& ns,
              const std::string& name, std::string body);
  StatusOr<json::object> WriteLocked(const client::ResourceRef& res, const std::string& ns,
                                     json::object obj, bool create) REQUIRES(mu_);
  // Appends a write to the history and queues it on matching watches; `old`
  // (null on create) decides whether a selector watch sees it enter or leave.
  void PublishLocked(const std::string& resource, client::WatchEvent::Type type,
                     const json::object* old, const json::object& object) REQUIRES(mu_);
  std::vector<std::shared_ptr<Sink>> LiveSinksLocked() REQUIRES(mu_);

  Clock& clock_;
  const size_t history_limit_;
  mutable Mutex mu_;
  std::map<std::string, ObjectMap> objects_ GUARDED_BY(mu_);  // by ResourceKey
  int64_t rv_ GUARDED_BY(mu_) = 1;
  int64_t uid_counter_ GUARDED_BY(mu_) = 0;
  int64_t compacted_rv_ GUARDED_BY(mu_) = 1;  // oldest resumable
  std::deque<HistoryEntry> history_ GUARDED_BY(mu_);
  std::map<Verb, std::deque<Status>> injected_ GUARDED_BY(mu_);
  std::vector<Action> actions_ GUARDED_BY(mu_);
  std::vector<std::weak_ptr<Sink>> sinks_ GUARDED_BY(mu_);
  bool paused_ GUARDED_BY(mu_) = false;
};

}  // namespace flotilla::runtime
