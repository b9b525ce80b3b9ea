// ForwardingClient: a client::Client that passes every call to another one.
// Tests derive from it to interfere with a few calls (cut a candidate off
// from the server, hold a watch back) and leave the rest alone. Test-only.
#pragma once

#include <memory>
#include <string>

#include "client/client.h"

namespace flotilla::runtime::testing {

class ForwardingClient : public client::Client {
 public:
  explicit ForwardingClient(client::Client& inner) : inner_(inner) {}

  StatusOr<json::object> Get(const client::ResourceRef& r, const std::string& ns,
                             const std::string& name) override {
    return inner_.Get(r, ns, name);
  }
  StatusOr<client::ObjectList> List(const client::ResourceRef& r, const std::string& ns,
                                    const client::ListOptions& o) override {
    return inner_.List(r, ns, o);
  }
  StatusOr<std::unique_ptr<client::Watch>> StartWatch(const client::ResourceRef& r,
                                                      const std::string& ns,
                                                      const client::WatchOptions& o,
                                                      client::WatchCallback on_event,
                                                      client::WatchDone on_done) override {
    return inner_.StartWatch(r, ns, o, std::move(on_event), std::move(on_done));
  }
  StatusOr<json::object> Create(const client::ResourceRef& r, const std::string& ns,
                                const json::object& obj) override {
    return inner_.Create(r, ns, obj);
  }
  StatusOr<json::object> Update(const client::ResourceRef& r, const std::string& ns,
                                const json::object& obj) override {
    return inner_.Update(r, ns, obj);
  }
  StatusOr<json::object> UpdateStatus(const client::ResourceRef& r, const std::string& ns,
                                      const json::object& obj) override {
    return inner_.UpdateStatus(r, ns, obj);
  }
  StatusOr<json::object> Patch(const client::ResourceRef& r, const std::string& ns,
                               const std::string& name, client::PatchType type,
                               const std::string& patch, const std::string& sub) override {
    return inner_.Patch(r, ns, name, type, patch, sub);
  }
  Status Delete(const client::ResourceRef& r, const std::string& ns, const std::string& name,
                const client::DeleteOptions& o) override {
    return inner_.Delete(r, ns, name, o);
  }
  StatusOr<json::object> GetScale(const client::ResourceRef& r, const std::string& ns,
                                  const std::string& name) override {
    return inner_.GetScale(r, ns, name);
  }
  StatusOr<json::object> UpdateScale(const client::ResourceRef& r, const std::string& ns,
                                     const std::string& name, int64_t replicas) override {
    return inner_.UpdateScale(r, ns, name, replicas);
  }
  StatusOr<json::object> CreateSubresource(const client::ResourceRef& r, const std::string& ns,
                                           const std::string& name, const std::string& sub,
                                           const json::object& body) override {
    return inner_.CreateSubresource(r, ns, name, sub, body);
  }

 protected:
  client::Client& inner_;
};

}  // namespace flotilla::runtime::testing
