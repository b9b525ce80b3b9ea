#include "client/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/base64.h"
#include "base/json.h"

namespace flotilla::client {
namespace {

using ::testing::HasSubstr;

constexpr char kCaPem[] = "-----BEGIN CERTIFICATE-----\nY2EtYnl0ZXM=\n-----END CERTIFICATE-----\n";
constexpr char kCertPem[] = "-----BEGIN CERTIFICATE-----\nY2VydA==\n-----END CERTIFICATE-----\n";
constexpr char kKeyPem[] = "-----BEGIN PRIVATE KEY-----\na2V5\n-----END PRIVATE KEY-----\n";

class KubeconfigTest : public ::testing::Test {
 protected:
  KubeconfigTest() {
    const char* base = std::getenv("TEST_TMPDIR");
    dir_ = std::string(base != nullptr ? base : "/tmp") + "/kubeconfig_test.XXXXXX";
    EXPECT_NE(mkdtemp(dir_.data()), nullptr);
  }
  ~KubeconfigTest() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& rel, std::string_view content) {
    std::filesystem::path p = std::filesystem::path(dir_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

  // Runs kubectl in dir_ with HOME=dir_ and the given KUBECONFIG; returns
  // stdout, failing the test when kubectl fails.
  std::string Kubectl(const std::string& kubeconfig, const std::string& args) {
    std::string cmd = "cd " + dir_ + " && HOME=" + dir_ + " KUBECONFIG=" + kubeconfig +
                      " kubectl " + args + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    EXPECT_EQ(pclose(pipe), 0) << cmd << "\n" << out;
    return out;
  }

  RestConfig Load(KubeconfigLoadOptions opts) {
    auto config = LoadRestConfig(opts);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    return config.ok() ? *config : RestConfig();
  }

  Status LoadError(const std::string& text, const std::string& context = "") {
    KubeconfigLoadOptions opts;
    opts.explicit_path = Write("err/kc", text);
    opts.context = context;
    auto config = LoadRestConfig(opts);
    EXPECT_FALSE(config.ok()) << text;
    return config.ok() ? Status() : config.status();
  }

  std::string dir_;
};

TEST_F(KubeconfigTest, ReadsWhatKubectlConfigWrites) {
  Write("ca.crt", kCaPem);
  Write("c.crt", kCertPem);
  Write("c.key", kKeyPem);
  std::string kc = dir_ + "/kc";
  Kubectl(kc,
          "config set-cluster fed --server=https://10.1.2.3:6443/prefix "
          "--certificate-authority=ca.crt --embed-certs=true");
  Kubectl(kc,
          "config set-cluster other --server=https://other.example:443 "
          "--certificate-authority=ca.crt --tls-server-name=api.internal");
  Kubectl(kc, "config set-cluster ins --server=https://1.1.1.1 --insecure-skip-tls-verify=true");
  Kubectl(kc, "config set-credentials admin --token=s3cr3t");
  Kubectl(kc,
          "config set-credentials embedded --client-certificate=c.crt --client-key=c.key "
          "--embed-certs=true");
  Kubectl(kc, "config set-credentials files --client-certificate=c.crt --client-key=c.key");
  Kubectl(kc, "config set-context fed-admin --cluster=fed --user=admin --namespace=team-a");
  Kubectl(kc, "config set-context other-files --cluster=other --user=files");
  Kubectl(kc, "config set-context ins --cluster=ins --user=embedded");
  Kubectl(kc, "config use-context fed-admin");

  KubeconfigLoadOptions opts;
  opts.kubeconfig_env = kc;
  RestConfig fed = Load(opts);
  EXPECT_EQ(fed.server, "https://10.1.2.3:6443/prefix");
  EXPECT_EQ(fed.ca_pem, kCaPem);
  EXPECT_FALSE(fed.insecure);
  EXPECT_EQ(fed.token, "s3cr3t");
  EXPECT_EQ(fed.ns, "team-a");
  EXPECT_TRUE(fed.client_cert_pem.empty());

  opts.context = "other-files";
  RestConfig other = Load(opts);
  EXPECT_EQ(other.server, "https://other.example:443");
  EXPECT_EQ(other.ca_pem, kCaPem);
  EXPECT_EQ(other.tls_server_name, "api.internal");
  EXPECT_EQ(other.client_cert_pem, kCertPem);
  EXPECT_EQ(other.client_key_pem, kKeyPem);
  EXPECT_EQ(other.token, "");
  EXPECT_EQ(other.ns, "default");

  opts.context = "ins";
  RestConfig ins = Load(opts);
  EXPECT_TRUE(ins.insecure);
  EXPECT_TRUE(ins.ca_pem.empty());
  EXPECT_EQ(ins.client_cert_pem, kCertPem);
  EXPECT_EQ(ins.client_key_pem, kKeyPem);
}

TEST_F(KubeconfigTest, RelativePathsResolveAgainstTheKubeconfigDirectory) {
  Write("pki/ca.crt", kCaPem);
  Write("conf/certs/c.crt", kCertPem);
  Write("conf/certs/c.key", kKeyPem);
  Write("conf/token", "  from-file\n");
  std::string kc = Write("conf/kc", R"(apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://h:6443/
    certificate-authority: ../pki/ca.crt
users:
- name: certs
  user: {client-certificate: certs/c.crt, client-key: certs/c.key}
- name: tokenfile
  user: {tokenFile: token}
- name: both
  user: {tokenFile: token, token: inline}
contexts:
- {name: certs, context: {cluster: c, user: certs}}
- {name: tokenfile, context: {cluster: c, user: tokenfile}}
- {name: both, context: {cluster: c, user: both}}
current-context: certs
)");
  KubeconfigLoadOptions opts;
  opts.explicit_path = kc;
  RestConfig certs = Load(opts);
  EXPECT_EQ(certs.server, "https://h:6443");
  EXPECT_EQ(certs.ca_pem, kCaPem);
  EXPECT_EQ(certs.client_cert_pem, kCertPem);
  EXPECT_EQ(certs.client_key_pem, kKeyPem);
  opts.context = "tokenfile";
  EXPECT_EQ(Load(opts).token, "from-file");
  opts.context = "both";
  EXPECT_EQ(Load(opts).token, "inline");

  auto parsed = LoadKubeconfig(opts);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->clusters.at("c").certificate_authority, dir_ + "/pki/ca.crt");
  EXPECT_EQ(parsed->users.at("tokenfile").token_file, dir_ + "/conf/token");
}

constexpr char kFileA[] = R"(apiVersion: v1
kind: Config
clusters:
- {name: shared, cluster: {server: "https://a.example"}}
- {name: only-a, cluster: {server: "https://only-a.example"}}
users:
- {name: u, user: {token: token-a}}
contexts:
- {name: ctx-a, context: {cluster: shared, user: u, namespace: ns-a}}
)";

constexpr char kFileB[] = R"(apiVersion: v1
kind: Config
clusters:
- {name: shared, cluster: {server: "https://b.example"}}
- {name: only-b, cluster: {server: "https://only-b.example"}}
users:
- {name: u, user: {token: token-b}}
- {name: ub, user: {token: token-ub}}
contexts:
- {name: ctx-a, context: {cluster: only-b, user: ub}}
- {name: ctx-b, context: {cluster: only-b, user: ub}}
current-context: ctx-a
)";

// The server and token in `kubectl config view --minify -o json` output.
std::pair<std::string, std::string> KubectlView(const std::string& json_text) {
  auto v = ParseJson(json_text);
  EXPECT_TRUE(v.ok()) << json_text;
  if (!v.ok()) return {};
  const json::object& root = v->as_object();
  const json::value* cluster = &GetArray(root, "clusters")->at(0);
  const json::value* user = &GetArray(root, "users")->at(0);
  return {std::string(Find(*cluster, "cluster.server")->as_string()),
          std::string(Find(*user, "user.token")->as_string())};
}

TEST_F(KubeconfigTest, MergesSeveralFilesAsKubectlDoes) {
  std::string a = Write("a/config", kFileA);
  std::string b = Write("b/config", kFileB);
  std::string list = a + ":" + dir_ + "/missing:" + b + "::" + a;
  KubeconfigLoadOptions opts;
  opts.kubeconfig_env = list;
  auto merged = LoadKubeconfig(opts);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->current_context, "ctx-a");  // a sets none; b's wins
  EXPECT_EQ(merged->clusters.size(), 3u);
  EXPECT_EQ(merged->clusters.at("shared").server, "https://a.example");
  EXPECT_EQ(merged->users.at("u").token, "token-a");
  EXPECT_EQ(merged->contexts.at("ctx-a").cluster, "shared");

  RestConfig current = Load(opts);
  EXPECT_EQ(current.server, "https://a.example");
  EXPECT_EQ(current.token, "token-a");
  EXPECT_EQ(current.ns, "ns-a");
  auto [server, token] = KubectlView(Kubectl(list, "config view --minify --raw -o json"));
  EXPECT_EQ(server, current.server);
  EXPECT_EQ(token, current.token);

  opts.context = "ctx-b";
  RestConfig b_ctx = Load(opts);
  EXPECT_EQ(b_ctx.server, "https://only-b.example");
  EXPECT_EQ(b_ctx.token, "token-ub");

  // With the order reversed, b's entries win.
  opts = {};
  opts.kubeconfig_env = b + ":" + a;
  RestConfig reversed = Load(opts);
  EXPECT_EQ(reversed.server, "https://only-b.example");
  EXPECT_EQ(reversed.token, "token-ub");
  auto [rserver, rtoken] =
      KubectlView(Kubectl(opts.kubeconfig_env, "config view --minify --raw -o json"));
  EXPECT_EQ(rserver, reversed.server);
  EXPECT_EQ(rtoken, reversed.token);
}

TEST_F(KubeconfigTest, FallsBackToHomeKubeConfig) {
  Write("home/.kube/config", kFileA);
  KubeconfigLoadOptions opts;
  opts.home = dir_ + "/home";
  opts.context = "ctx-a";
  EXPECT_EQ(Load(opts).server, "https://a.example");
}

TEST_F(KubeconfigTest, WrittenFilesRoundTripAndKubectlReadsThem) {
  std::string path = dir_ + "/out/admin.kubeconfig";
  ASSERT_TRUE(WriteKubeconfig(path, "flotilla", "https://127.0.0.1:6443", kCaPem, "flotilla-admin",
                              {.token = "12345"}, "team-a")
                  .ok());
  struct stat st = {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);

  KubeconfigLoadOptions opts;
  opts.explicit_path = path;
  RestConfig config = Load(opts);
  EXPECT_EQ(config.server, "https://127.0.0.1:6443");
  EXPECT_EQ(config.ca_pem, kCaPem);
  EXPECT_EQ(config.token, "12345");
  EXPECT_EQ(config.ns, "team-a");

  auto view =
      ParseJson(Kubectl(dir_ + "/unused", "config view --raw -o json --kubeconfig " + path));
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(Find(*view, "current-context")->as_string(), "flotilla");
  const json::value& cluster = GetArray(view->as_object(), "clusters")->at(0);
  EXPECT_EQ(Find(cluster, "name")->as_string(), "flotilla");
  EXPECT_EQ(Find(cluster, "cluster.server")->as_string(), "https://127.0.0.1:6443");
  EXPECT_EQ(Find(cluster, "cluster.certificate-authority-data")->as_string(), Base64Encode(kCaPem));
  const json::value& user = GetArray(view->as_object(), "users")->at(0);
  EXPECT_EQ(Find(user, "name")->as_string(), "flotilla-admin");
  EXPECT_EQ(Find(user, "user.token")->as_string(), "12345");
  const json::value& context = GetArray(view->as_object(), "contexts")->at(0);
  EXPECT_EQ(Find(context, "context.namespace")->as_string(), "team-a");
  EXPECT_EQ(Find(context, "context.user")->as_string(), "flotilla-admin");
}

TEST_F(KubeconfigTest, WrittenCertificateCredentialsRoundTrip) {
  std::string path = dir_ + "/cert.kubeconfig";
  ASSERT_TRUE(WriteKubeconfig(path, "member-1", "https://[::1]:7443", kCaPem, "true",
                              {.client_cert_pem = kCertPem, .client_key_pem = kKeyPem})
                  .ok());
  KubeconfigLoadOptions opts;
  opts.explicit_path = path;
  RestConfig config = Load(opts);
  EXPECT_EQ(config.server, "https://[::1]:7443");
  EXPECT_EQ(config.client_cert_pem, kCertPem);
  EXPECT_EQ(config.client_key_pem, kKeyPem);
  EXPECT_EQ(config.token, "");
  EXPECT_EQ(config.ns, "default");
  auto view =
      ParseJson(Kubectl(dir_ + "/unused", "config view --raw -o json --kubeconfig " + path));
  ASSERT_TRUE(view.ok());
  const json::value& user = GetArray(view->as_object(), "users")->at(0);
  EXPECT_EQ(Find(user, "name")->as_string(), "true");
  EXPECT_EQ(Find(user, "user.client-key-data")->as_string(), Base64Encode(kKeyPem));
}

TEST_F(KubeconfigTest, ServerWithoutSchemeGetsOneAsClientGoDoes) {
  std::string kc = Write("scheme/kc", std::string(R"(clusters:
- {name: plain, cluster: {server: "h:8080"}}
- {name: tls, cluster: {server: "h:6443", certificate-authority-data: ")") +
                                          Base64Encode(kCaPem) + R"("}}
contexts:
- {name: plain, context: {cluster: plain}}
- {name: tls, context: {cluster: tls}}
)");
  KubeconfigLoadOptions opts;
  opts.explicit_path = kc;
  opts.context = "plain";
  EXPECT_EQ(Load(opts).server, "http://h:8080");
  opts.context = "tls";
  EXPECT_EQ(Load(opts).server, "https://h:6443");
}

TEST_F(KubeconfigTest, ClearErrors) {
  KubeconfigLoadOptions missing;
  missing.explicit_path = dir_ + "/nope";
  auto r = LoadRestConfig(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(dir_ + "/nope"));

  const std::string ok_cluster = "clusters:\n- {name: c, cluster: {server: https://h}}\n";
  EXPECT_THAT(LoadError(ok_cluster).message(), HasSubstr("no context chosen"));
  EXPECT_THAT(LoadError(ok_cluster + "current-context: x\n").message(),
              HasSubstr("context \"x\" does not exist"));
  EXPECT_THAT(LoadError(std::string(kFileA), "zz").message(),
              HasSubstr("context \"zz\" does not exist"));
  EXPECT_THAT(LoadError("contexts:\n- {name: x, context: {cluster: gone}}\n", "x").message(),
              HasSubstr("cluster \"gone\" of context \"x\" does not exist"));
  EXPECT_THAT(
      LoadError(ok_cluster + "contexts:\n- {name: x, context: {cluster: c, user: who}}\n", "x")
          .message(),
      HasSubstr("user \"who\" of context \"x\" does not exist"));
  EXPECT_THAT(LoadError("clusters:\n- {name: c, cluster: {}}\ncontexts:\n- {name: x, context: "
                        "{cluster: c}}\n",
                        "x")
                  .message(),
              HasSubstr("cluster \"c\" has no server"));
  EXPECT_THAT(LoadError(ok_cluster + "- {name: c, cluster: {server: https://h2}}\n").message(),
              HasSubstr("duplicate name \"c\""));
  EXPECT_THAT(LoadError("clusters: [oops\n").message(), HasSubstr(dir_ + "/err/kc"));
  EXPECT_THAT(LoadError("clusters: {a: b}\n").message(), HasSubstr("clusters: expected a list"));
  EXPECT_THAT(
      LoadError("clusters:\n- {name: c, cluster: {server: https://h, certificate-authority-data: "
                "\"!!notbase64\"}}\n")
          .message(),
      HasSubstr("clusters[0].cluster.certificate-authority-data: invalid base64"));
}

TEST_F(KubeconfigTest, RejectsWhatKubectlRejects) {
  const std::string ctx = "contexts:\n- {name: x, context: {cluster: c, user: u}}\n";
  const std::string user = "users:\n- {name: u, user: {token: t}}\n";
  EXPECT_THAT(LoadError("clusters:\n- {name: c, cluster: {server: https://h, "
                        "insecure-skip-tls-verify: true, certificate-authority-data: YQ==}}\n" +
                            user + ctx,
                        "x")
                  .message(),
              HasSubstr("insecure flag is not allowed"));
  EXPECT_THAT(LoadError("clusters:\n- {name: c, cluster: {server: https://h, "
                        "certificate-authority: /x, certificate-authority-data: YQ==}}\n" +
                            user + ctx,
                        "x")
                  .message(),
              HasSubstr("certificate-authority-data and certificate-authority are both specified"));
  const std::string cluster = "clusters:\n- {name: c, cluster: {server: https://h}}\n";
  EXPECT_THAT(
      LoadError(cluster + "users:\n- {name: u, user: {client-certificate-data: YQ==}}\n" + ctx, "x")
          .message(),
      HasSubstr("user \"u\" has a client certificate but no key"));
  EXPECT_THAT(
      LoadError(cluster + "users:\n- {name: u, user: {tokenFile: /nonexistent/t}}\n" + ctx, "x")
          .message(),
      HasSubstr("/nonexistent/t"));
  EXPECT_THAT(LoadError(cluster + "users:\n- {name: u, user: {exec: {command: aws}}}\n" + ctx, "x")
                  .message(),
              HasSubstr("exec or auth-provider"));
  EXPECT_THAT(LoadError("clusters:\n- {name: c, cluster: {server: https://h, "
                        "certificate-authority: missing-ca.crt}}\n" +
                            user + ctx,
                        "x")
                  .message(),
              HasSubstr(dir_ + "/err/missing-ca.crt"));
}

TEST_F(KubeconfigTest, EmptyFileIsAnEmptyConfig) {
  auto parsed = ParseKubeconfig("", "empty", "/");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->clusters.empty());
  EXPECT_FALSE(ParseKubeconfig("- a\n- b\n", "list", "/").ok());
}

// Contexts added to a kubeconfig kubectl reads as it read it before: the
// quoted token that looks like a number stays a string, the other entries
// and current-context stay, an entry of the same name is replaced.
TEST_F(KubeconfigTest, UpsertedContextsKeepTheRestOfTheFileAsKubectlReadsIt) {
  std::string kc = Write("merge/config", R"(apiVersion: v1
kind: Config
clusters:
- name: fed
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: )" + Base64Encode(kCaPem) +
                                             R"(
contexts:
- name: fed
  context: {cluster: fed, user: admin, namespace: team}
- name: flotilla-a
  context: {cluster: stale, user: nobody}
current-context: fed
users:
- name: admin
  user:
    token: "0123456789"
)");
  Kubeconfig::Cluster fed;
  fed.server = "https://127.0.0.1:6443/apis/federation/v1beta1/clusters/a/proxy";
  fed.certificate_authority_data = kCaPem;
  Kubeconfig::Cluster b = fed;
  b.server = "https://127.0.0.1:6443/apis/federation/v1beta1/clusters/b/proxy";
  b.insecure_skip_tls_verify = true;
  b.certificate_authority_data.clear();
  ASSERT_TRUE(UpsertKubeconfigContexts(
                  kc, {{"flotilla-a", fed, "admin", "team"}, {"flotilla-b", b, "admin", ""}})
                  .ok());
  EXPECT_EQ(Kubectl(kc, "config view --raw -o jsonpath='{.users[0].user.token}'"), "0123456789");
  EXPECT_EQ(Kubectl(kc, "config current-context"), "fed\n");
  EXPECT_EQ(Kubectl(kc, "config get-contexts -o name"), "fed\nflotilla-a\nflotilla-b\n");
  KubeconfigLoadOptions opts;
  opts.explicit_path = kc;
  opts.context = "flotilla-a";
  RestConfig a = Load(opts);
  EXPECT_EQ(a.server, fed.server);
  EXPECT_EQ(a.ca_pem, kCaPem);
  EXPECT_EQ(a.token, "0123456789");
  EXPECT_EQ(a.ns, "team");
  opts.context = "flotilla-b";
  RestConfig rb = Load(opts);
  EXPECT_TRUE(rb.insecure);
  EXPECT_EQ(rb.ns, "default");

  // A missing file is created; a file that is not a kubeconfig is refused.
  std::string fresh = dir_ + "/new/dir/config";
  ASSERT_TRUE(UpsertKubeconfigContexts(fresh, {{"flotilla-a", fed, "admin", ""}}).ok());
  EXPECT_EQ(Kubectl(fresh, "config get-contexts -o name"), "flotilla-a\n");
  struct stat st;
  ASSERT_EQ(stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Status bad = UpsertKubeconfigContexts(Write("bad/config", "- a list\n"), {});
  EXPECT_TRUE(bad.Is(Reason::kBadRequest)) << bad.ToString();
}

TEST_F(KubeconfigTest, TheFileToWriteIsKubectlsChoice) {
  KubeconfigLoadOptions opts;
  opts.home = dir_;
  EXPECT_EQ(KubeconfigFileToWrite(opts), dir_ + "/.kube/config");
  std::string second = Write("two", "");
  opts.kubeconfig_env = dir_ + "/one:" + second;
  EXPECT_EQ(KubeconfigFileToWrite(opts), second);  // the first that exists
  opts.kubeconfig_env = dir_ + "/one:" + dir_ + "/three";
  EXPECT_EQ(KubeconfigFileToWrite(opts), dir_ + "/three");  // none exists: the last
  opts.explicit_path = dir_ + "/explicit";
  EXPECT_EQ(KubeconfigFileToWrite(opts), dir_ + "/explicit");
}

}  // namespace
}  // namespace flotilla::client
