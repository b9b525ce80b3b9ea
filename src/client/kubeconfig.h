// Kubeconfig files, read the way kubectl (client-go's clientcmd) reads them
// and written so that kubectl reads ours.
//
// Loading: an explicit file (like --kubeconfig) must exist and is used alone;
// otherwise the ':'-separated $KUBECONFIG list is merged (missing files are
// skipped, the first file to name a cluster, user or context wins that name
// entirely, current-context comes from the first file that sets one);
// otherwise ~/.kube/config. Relative paths inside a file resolve against that
// file's directory. The chosen context (an override, else current-context)
// is then resolved into a RestConfig with the referenced files read.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace flotilla::client {

// Everything a REST client needs to reach one API server.
class H2Tunnel;

struct RestConfig {
  std::string server;  // "https://host:port[/path-prefix]", no trailing '/'
  // Set: the server is reached over the connection it opened to us (an
  // agent's tunnel, h2_connection.h), never dialled; `server` then only
  // names it, and the credentials are the agent's, not sent from here.
  std::shared_ptr<H2Tunnel> tunnel;
  std::string ca_pem;  // empty: the system trust store
  bool insecure = false;
  std::string tls_server_name;
  std::string client_cert_pem, client_key_pem;
  std::string token;
  std::string ns = "default";  // the context's namespace, else "default"
};

// The parsed form of one kubeconfig or a merge of several. File paths are
// absolute (resolved against the originating file's directory); *_data fields
// hold decoded bytes.
struct Kubeconfig {
  struct Cluster {
    std::string server;
    std::string certificate_authority, certificate_authority_data;
    bool insecure_skip_tls_verify = false;
    std::string tls_server_name;
  };
  struct User {
    std::string client_certificate, client_certificate_data;
    std::string client_key, client_key_data;
    std::string token, token_file;
    bool has_plugin = false;  // exec or auth-provider, which Flotilla cannot run
  };
  struct Context {
    std::string cluster, user, ns;
  };
  std::map<std::string, Cluster> clusters;
  std::map<std::string, User> users;
  std::map<std::string, Context> contexts;
  std::string current_context;
};

struct KubeconfigLoadOptions {
  std::string explicit_path;   // like --kubeconfig: this file only, which must exist
  std::string kubeconfig_env;  // $KUBECONFIG, used when explicit_path is empty
  std::string home;            // $HOME, for ~/.kube/config when both above are empty
  std::string context;         // like --context: overrides current-context

  // kubeconfig_env and home from the process environment.
  static KubeconfigLoadOptions FromEnvironment();
};

// Parses one kubeconfig document (YAML or JSON). `source` names it in errors;
// relative paths resolve against `base_dir` (the current directory when
// empty). Errors are BadRequest: malformed YAML, wrong types, duplicate names
// in a list, invalid base64.
StatusOr<Kubeconfig> ParseKubeconfig(std::string_view text, std::string_view source,
                                     std::string_view base_dir);

// Loads and merges the files chosen by `opts` (see the file comment).
StatusOr<Kubeconfig> LoadKubeconfig(const KubeconfigLoadOptions& opts);

// Resolves `context` (current_context when empty) into a RestConfig, reading
// the referenced files. Errors name what is wrong: no current context, a
// context, cluster or user that does not exist, a cluster without a server,
// conflicting or incomplete fields (as kubectl rejects them), unreadable files.
StatusOr<RestConfig> ResolveRestConfig(const Kubeconfig& config, std::string_view context = "");

// LoadKubeconfig and ResolveRestConfig with opts.context.
StatusOr<RestConfig> LoadRestConfig(const KubeconfigLoadOptions& opts);

// Credentials for WriteKubeconfig: a token, or a client certificate and key.
struct KubeconfigCredentials {
  std::string token;
  std::string client_cert_pem, client_key_pem;
};

// A kubeconfig with one cluster, one user and one context named after the
// cluster, set as current-context; the CA and client certificate are embedded
// as *-data fields. An empty ca_pem writes no CA; an empty ns no namespace.
// Invalid when a value cannot be written as YAML (e.g. not UTF-8).
StatusOr<std::string> RenderKubeconfig(std::string_view cluster_name, std::string_view server,
                                       std::string_view ca_pem, std::string_view user_name,
                                       const KubeconfigCredentials& creds,
                                       std::string_view ns = "");

// Writes RenderKubeconfig(...) to `path` atomically with mode 0600, creating
// the parent directory when missing.
Status WriteKubeconfig(const std::string& path, std::string_view cluster_name,
                       std::string_view server, std::string_view ca_pem, std::string_view user_name,
                       const KubeconfigCredentials& creds, std::string_view ns = "");

// The file kubectl's `config set-context` writes to under `opts`: the
// explicit path; else, of $KUBECONFIG's files, the first that exists, or
// the last when none does; else ~/.kube/config.
std::string KubeconfigFileToWrite(const KubeconfigLoadOptions& opts);

// One context and the cluster entry of the same name, for
// UpsertKubeconfigContexts. The cluster's file paths must be absolute.
struct KubeconfigContextEntry {
  std::string name;
  Kubeconfig::Cluster cluster;
  std::string user;  // the name of a user entry kubectl finds
  std::string ns;    // "" writes no namespace
};

// Adds each entry's cluster and context to the kubeconfig at `path`
// (created, with its directory, when missing), replacing entries of the
// same names; everything else in the file stays, current-context included.
// Atomic, mode 0600. BadRequest when the file is not a kubeconfig.
Status UpsertKubeconfigContexts(const std::string& path,
                                const std::vector<KubeconfigContextEntry>& entries);

}  // namespace flotilla::client
