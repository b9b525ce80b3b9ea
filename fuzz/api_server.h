// One in-process federation API server for the targets that go through the
// whole request path (decoding, schema check, defaulting, validation, the
// federation's admission), on a memory store, created on first use and kept
// for the process. Requests that write carry dryRun=All, so the store never
// grows.
#pragma once

#include <string>
#include <string_view>

namespace flotilla::fuzz {

struct Response {
  int code = 0;
  std::string body;
};

// Sends a request with `body` of `content_type`.
Response Call(std::string_view method, std::string_view target, std::string_view content_type,
              std::string_view body);

// What every answer to a bad request must be: a 2xx or 4xx (never a 5xx:
// bad input is the client's fault) with a JSON object body.
void ExpectClean(const Response& r, std::string_view request);

// The Deployment "existing" in "default", created once, for updates and
// patches.
inline constexpr char kExistingDeployment[] =
    "/apis/apps/v1/namespaces/default/deployments/existing";

}  // namespace flotilla::fuzz
