// The Client verbs written once over a Transport (transport.h): each builds
// its request (request_builder.h), sends it, and decodes the response
// (response_decoder.h); watches are StreamWatches.
#include <utility>

#include "client/request_builder.h"
#include "client/response_decoder.h"
#include "client/stream_watch.h"
#include "client/transport.h"

namespace flotilla::client {
namespace {

class TransportClient : public Client {
 public:
  explicit TransportClient(std::shared_ptr<Transport> transport)
      : transport_(std::move(transport)) {}

  StatusOr<json::object> Get(const ResourceRef& res, const std::string& ns,
                             const std::string& name) override {
    return DecodeObject(Send(BuildGet(res, ns, name)));
  }

  StatusOr<ObjectList> List(const ResourceRef& res, const std::string& ns,
                            const ListOptions& opts) override {
    return DecodeList(Send(BuildList(res, ns, opts)));
  }

  StatusOr<std::unique_ptr<Watch>> StartWatch(const ResourceRef& res, const std::string& ns,
                                              const WatchOptions& opts, WatchCallback on_event,
                                              WatchDone on_done) override {
    FLOTILLA_ASSIGN_OR_RETURN(ApiRequest req, BuildWatch(res, ns, opts));
    return StreamWatch::Start(*transport_, req, std::move(on_event), std::move(on_done),
                              opts.shared_objects);
  }

  StatusOr<json::object> Create(const ResourceRef& res, const std::string& ns,
                                const json::object& obj) override {
    return DecodeObject(Send(BuildCreate(res, ns, obj)));
  }

  StatusOr<json::object> Update(const ResourceRef& res, const std::string& ns,
                                const json::object& obj) override {
    return DecodeObject(Send(BuildUpdate(res, ns, obj)));
  }

  StatusOr<json::object> UpdateStatus(const ResourceRef& res, const std::string& ns,
                                      const json::object& obj) override {
    return DecodeObject(Send(BuildUpdate(res, ns, obj, "status")));
  }

  StatusOr<json::object> Patch(const ResourceRef& res, const std::string& ns,
                               const std::string& name, PatchType type, const std::string& patch,
                               const std::string& subresource) override {
    return DecodeObject(Send(BuildPatch(res, ns, name, type, patch, subresource)));
  }

  Status Delete(const ResourceRef& res, const std::string& ns, const std::string& name,
                const DeleteOptions& opts) override {
    return DecodeNoContent(Send(BuildDelete(res, ns, name, opts)));
  }

  StatusOr<json::object> GetScale(const ResourceRef& res, const std::string& ns,
                                  const std::string& name) override {
    return DecodeObject(Send(BuildGet(res, ns, name, "scale")));
  }

  StatusOr<json::object> UpdateScale(const ResourceRef& res, const std::string& ns,
                                     const std::string& name, int64_t replicas) override {
    return DecodeObject(Send(BuildUpdateScale(res, ns, name, replicas)));
  }

  StatusOr<json::object> CreateSubresource(const ResourceRef& res, const std::string& ns,
                                           const std::string& name, const std::string& subresource,
                                           const json::object& body) override {
    return DecodeObject(Send(BuildCreateSubresource(res, ns, name, subresource, body)));
  }

 private:
  StatusOr<ApiResponse> Send(StatusOr<ApiRequest> req) {
    if (!req.ok()) return req.status();
    return transport_->Do(*req);
  }

  std::shared_ptr<Transport> transport_;
};

}  // namespace

std::unique_ptr<Client> NewTransportClient(std::shared_ptr<Transport> transport) {
  return std::make_unique<TransportClient>(std::move(transport));
}

}  // namespace flotilla::client
