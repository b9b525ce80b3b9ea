// The in-process client: the Client over an ApiServer in the same process,
// without HTTP. Each request is built exactly as the REST client builds it
// (the same target, query string and body), handed to ApiServer::Handle with
// an in-memory Responder, and its response decoded as the REST client
// decodes it, so semantics, errors and resourceVersions are identical by
// construction. A watch runs Handle on the Watch's own thread; the
// Responder's chunks feed the same line decoder, and Stop() makes the
// Responder report the client gone.
#pragma once

#include <memory>
#include <string>

#include "apiserver/api_server.h"
#include "client/client.h"

namespace flotilla::client {

// `server` is not owned and must outlive the client and its watches.
// `token` is sent as a bearer token: needed when the ApiServer authenticates
// (an apiserver::Server does: use its pki().admin_token); empty for an
// ApiServer built without an authenticator, which runs every request as an
// unrestricted in-process user. `user_agent` names the writer: its writes
// are recorded under it in managedFields.
std::unique_ptr<Client> NewInProcessClient(apiserver::ApiServer& server,
                                           const std::string& token = "",
                                           const std::string& user_agent = "flotilla");

}  // namespace flotilla::client
