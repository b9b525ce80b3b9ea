// Writing Kubernetes responses: objects, lists and Status errors.
#pragma once

#include <string>
#include <vector>

#include "api/registry.h"
#include "apiserver/http.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::apiserver {

// The metav1.Status body for an error. `name`, `group` and `kind` (the
// resource plural, as kube-apiserver fills details.kind) may be empty.
json::object StatusObject(const Status& status, const std::string& name = "",
                          const std::string& group = "", const std::string& kind = "");

void RespondStatus(Responder& resp, const Status& status, const std::string& name = "",
                   const api::Resource* res = nullptr);
// Content-Type and Cache-Control as kube-apiserver sends them, and one
// Warning header per warning.
Headers JsonHeaders(const std::vector<std::string>& warnings = {},
                    const std::string& content_type = "application/json");
void RespondJson(Responder& resp, int code, std::string body,
                 const std::vector<std::string>& warnings = {},
                 const std::string& content_type = "application/json");

}  // namespace flotilla::apiserver
