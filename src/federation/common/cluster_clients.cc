// The registry of ready member clusters (cluster_clients.h).
#include "federation/common/cluster_clients.h"

#include "base/mutex.h"

namespace flotilla::federation {

int ClusterClients::Subscribe(ClusterCallbacks callbacks) {
  MutexLock notify(notify_mu_);
  std::map<std::string, std::shared_ptr<client::Client>> ready;
  int id = 0;
  {
    MutexLock lock(mu_);
    id = next_id_++;
    subscribers_[id] = callbacks;
    ready = clients_;
  }
  if (!callbacks.on_ready) return id;
  for (const auto& [name, c] : ready) {
    if (c) callbacks.on_ready(name, c);
  }
  return id;
}

void ClusterClients::Unsubscribe(int id) {
  MutexLock notify(notify_mu_);
  MutexLock lock(mu_);
  subscribers_.erase(id);
}

std::vector<ClusterCallbacks> ClusterClients::Subscribers() const {
  MutexLock lock(mu_);
  std::vector<ClusterCallbacks> out;
  for (const auto& [id, s] : subscribers_) out.push_back(s);
  return out;
}

void ClusterClients::SetReady(const std::string& name, std::shared_ptr<client::Client> client) {
  MutexLock notify(notify_mu_);
  {
    MutexLock lock(mu_);
    auto it = clients_.find(name);
    if (it != clients_.end() && it->second == client) return;
    clients_[name] = client;
  }
  for (const auto& s : Subscribers()) {
    if (s.on_ready) s.on_ready(name, client);
  }
}

void ClusterClients::SetNotReady(const std::string& name) {
  MutexLock notify(notify_mu_);
  {
    MutexLock lock(mu_);
    auto it = clients_.find(name);
    if (it == clients_.end()) {
      clients_[name] = nullptr;  // known from now on, so that Remove reports it
      return;
    }
    if (!it->second) return;
    it->second = nullptr;
  }
  for (const auto& s : Subscribers()) {
    if (s.on_not_ready) s.on_not_ready(name);
  }
}

void ClusterClients::Remove(const std::string& name) {
  MutexLock notify(notify_mu_);
  {
    MutexLock lock(mu_);
    if (clients_.erase(name) == 0) return;
  }
  for (const auto& s : Subscribers()) {
    if (s.on_removed) s.on_removed(name);
  }
}

std::shared_ptr<client::Client> ClusterClients::Get(const std::string& name) const {
  MutexLock lock(mu_);
  auto it = clients_.find(name);
  return it == clients_.end() ? nullptr : it->second;
}

std::vector<std::string> ClusterClients::ReadyClusters() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, c] : clients_) {
    if (c) out.push_back(name);
  }
  return out;
}

bool ClusterClients::Known(const std::string& name) const {
  MutexLock lock(mu_);
  return clients_.contains(name);
}

}  // namespace flotilla::federation
