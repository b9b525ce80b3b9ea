// The garbage collector and namespace lifecycle controller that run inside
// the API server, as kube-controller-manager's do for kube-apiserver:
// - dependents whose owners are all gone are deleted (Background);
// - an owner deleted with Foreground keeps its `foregroundDeletion`
//   finalizer until its dependents are gone;
// - an owner deleted with Orphan has its owner references stripped from its
//   dependents, then loses the `orphan` finalizer;
// - a terminating namespace has its contents deleted, then its `kubernetes`
//   finalizer removed, which deletes it.
// It keeps a small ownership index fed by a Store watch on every key.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "apiserver/objects.h"
#include "base/io.h"
#include "base/mutex.h"

namespace flotilla::apiserver {

class GarbageCollector {
 public:
  explicit GarbageCollector(Objects& objects);
  ~GarbageCollector();

  Status Start();
  void Stop();

 private:
  struct Node {
    std::shared_ptr<const api::Resource> res;  // a custom kind's may outlive its CRD
    std::string ns, name, uid;
    std::vector<std::string> owners;  // owner uids
    bool deleting = false;
    bool orphan = false;
    bool foreground = false;
    bool is_namespace = false;
    bool operator==(const Node&) const = default;
  };

  void OnEvents(const std::vector<storage::Event>& batch);
  // Indexes the value written to `key`: `object` when its writer shared it
  // (storage::Event::object), else the metadata parsed from `value`.
  void Index(const std::string& key, const std::string& value, const json::object* object)
      REQUIRES(mu_);
  void IndexObject(const std::string& key, std::shared_ptr<const api::Resource> res,
                   const json::object& obj) REQUIRES(mu_);
  void Unindex(const std::string& key) REQUIRES(mu_);
  // Processes what is pending (on the server pool, kicked by OnEvents).
  void ProcessPending();
  void Process(const std::string& key);
  void ProcessNamespace(const std::string& ns);
  std::optional<Node> Lookup(const std::string& key);
  std::vector<std::string> DependentsOf(const std::string& uid);
  // Processes `key` again on the next pass.
  void Retry(const std::string& key);

  Objects& objects_;
  std::unique_ptr<storage::Watcher> watcher_;

  Mutex mu_;
  // Hashed: every write in the cluster looks its key up here.
  std::unordered_map<std::string, Node> nodes_ GUARDED_BY(mu_);  // by key
  std::unordered_map<std::string, std::string> uid_to_key_ GUARDED_BY(mu_);
  // Owner uid -> the keys of its dependents.
  std::unordered_map<std::string, std::set<std::string>> dependents_ GUARDED_BY(mu_);
  std::set<std::string> pending_ GUARDED_BY(mu_);  // keys to check
  std::set<std::string> pending_namespaces_ GUARDED_BY(mu_);
  // Last: it runs ProcessPending, which uses the members above.
  PoolTrigger worker_{SharedBlockingPool(), [this] { ProcessPending(); }};
};

}  // namespace flotilla::apiserver
