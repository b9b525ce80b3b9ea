// The path -> RequestInfo parse, against kube-apiserver's for the shapes a
// client sends.
#include "apiserver/request_info.h"

#include <gtest/gtest.h>

#include "apiserver/api_server_test_util.h"

namespace flotilla::apiserver {
namespace {

using testing::RequestTo;

RequestInfo Parsed(const std::string& method, const std::string& target) {
  return ParseRequestInfo(RequestTo(method, target));
}

// "verb group/version ns resource name subresource", the fields compared.
std::string Fields(const RequestInfo& i) {
  return (i.resource_request ? "" : "nonresource ") + i.verb + " " + i.group + "/" + i.version +
         " " + i.ns + " " + i.resource + " " + i.name + " " + i.subresource;
}

TEST(RequestInfoTest, ResourcePaths) {
  EXPECT_EQ(Fields(Parsed("GET", "/api/v1/namespaces/d/configmaps/c")), "get /v1 d configmaps c ");
  EXPECT_EQ(Fields(Parsed("GET", "/api/v1/namespaces/d/configmaps")), "list /v1 d configmaps  ");
  EXPECT_EQ(Fields(Parsed("GET", "/api/v1/configmaps?watch=1")), "watch /v1  configmaps  ");
  EXPECT_EQ(Fields(Parsed("GET", "/api/v1/watch/namespaces/d/pods")), "watch /v1 d pods  ");
  EXPECT_EQ(Fields(Parsed("POST", "//apis/apps/v1/namespaces/d/deployments/")),
            "create apps/v1 d deployments  ");
  EXPECT_EQ(Fields(Parsed("PATCH", "/apis/apps/v1/namespaces/d/deployments/w/scale")),
            "patch apps/v1 d deployments w scale");
  EXPECT_EQ(Fields(Parsed("DELETE", "/api/v1/namespaces/d/pods")), "deletecollection /v1 d pods  ");
  EXPECT_EQ(Fields(Parsed("DELETE", "/api/v1/namespaces/d")), "delete /v1  namespaces d ");
  EXPECT_EQ(Fields(Parsed("PUT", "/api/v1/namespaces/d/finalize")),
            "update /v1  namespaces d finalize");
  EXPECT_EQ(Fields(Parsed("GET", "/api/v1/namespaces/d/status")), "get /v1  namespaces d status");
  // A proxy's path goes on past the subresource; its query is the target's.
  EXPECT_EQ(Fields(Parsed("GET",
                          "/apis/cluster.flotilla.io/v1alpha1/clusters/m1/proxy/api/v1/"
                          "namespaces/d/pods/p/log?watch=true")),
            "get cluster.flotilla.io/v1alpha1  clusters m1 proxy");
  EXPECT_EQ(Fields(Parsed("CONNECT", "/api/v1/namespaces/d/pods/p/exec")),
            "connect /v1 d pods p exec");
}

TEST(RequestInfoTest, DiscoveryAndOtherPaths) {
  for (const char* path : {"/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1/"}) {
    RequestInfo i = Parsed("GET", path);
    EXPECT_FALSE(i.resource_request) << path;
    EXPECT_TRUE(i.is_discovery) << path;
    EXPECT_EQ(i.verb, "get") << path;
  }
  RequestInfo healthz = Parsed("HEAD", "/healthz");
  EXPECT_FALSE(healthz.resource_request);
  EXPECT_FALSE(healthz.is_discovery);
  EXPECT_EQ(healthz.verb, "head");
  EXPECT_EQ(healthz.path, "/healthz");
  EXPECT_FALSE(Parsed("GET", "/").resource_request);
}

// The views agree with the strings, and say a watch is one.
TEST(RequestInfoTest, PathViewsAgreeWithTheInfo) {
  for (const char* target :
       {"/api/v1/namespaces/d/configmaps/c", "/api/v1/configmaps?watch=true",
        "/api/v1/watch/namespaces/d/pods", "/apis/apps/v1/namespaces/d/deployments/w/scale",
        "/api/v1/namespaces/d/finalize", "/apis/apps", "/healthz",
        "/apis/cluster.flotilla.io/v1alpha1/clusters/m1/proxy/api/v1/pods?watch=1"}) {
    Request req = RequestTo("GET", target);
    RequestInfo info = ParseRequestInfo(req);
    RequestPath path = ParseRequestPath(req);
    EXPECT_EQ(path.resource_request, info.resource_request) << target;
    EXPECT_EQ(path.is_discovery, info.is_discovery) << target;
    EXPECT_EQ(path.group, info.group) << target;
    EXPECT_EQ(path.version, info.version) << target;
    EXPECT_EQ(path.ns, info.ns) << target;
    EXPECT_EQ(path.resource, info.resource) << target;
    EXPECT_EQ(path.name, info.name) << target;
    EXPECT_EQ(path.subresource, info.subresource) << target;
    EXPECT_EQ(path.watch, info.verb == "watch") << target;
  }
}

}  // namespace
}  // namespace flotilla::apiserver
