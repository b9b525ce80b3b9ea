// `flotilla dashboard`: a web page over the federation on loopback
// (docs/dashboard.md). As `kubectl proxy` does, the server holds the user's
// kubeconfig credentials and the browser never sees them: it serves the
// page's static assets, built into the binary, and forwards the page's
// reads (GET of /api/..., /apis/... and /version, watches streamed as they
// come; and /workloads.json, the workload kinds it lists) to the federation with those credentials,
// so the page can read what the user may read and nothing more. The page's own watches come merged
// into one response (GET /watch?w=RV,PATH&w=...; streams.h), since a browser holds only six
// connections to one origin. It writes nothing: any other method gets 405. A request whose Host
// header is not a loopback name gets 403, so another site cannot reach it through DNS rebinding;
// responses carry no CORS headers, so another site's script cannot read them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/kubeconfig.h"

namespace flotilla::dashboard {

// A workload kind the page lists, as the federated kinds declare it
// (federation::ListedWorkloads); the page reads them from GET
// /workloads.json.
struct DashboardWorkload {
  std::string kind;                  // "Deployment"
  std::string path;                  // of its collection: "/apis/apps/v1/deployments"
  std::string breakdown_annotation;  // its per-cluster breakdown
};

struct DashboardOptions {
  int port = 8080;  // on 127.0.0.1; 0 picks a free one
  client::RestConfig federation;
  std::vector<DashboardWorkload> workloads;
};

class Dashboard {
 public:
  // Unavailable when the port is taken; BadRequest for a config that
  // cannot work.
  static StatusOr<std::unique_ptr<Dashboard>> Start(const DashboardOptions& options);
  virtual ~Dashboard() = default;
  virtual int port() const = 0;
  // Closes every connection (open watches end) and returns. Idempotent.
  virtual void Stop() = 0;
};

}  // namespace flotilla::dashboard
