// Kubeconfig parsing and merging (kubeconfig.h). yaml-cpp throws; every call
// into it happens under the one try block in ParseKubeconfig.
#include "client/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "base/base64.h"

namespace flotilla::client {
namespace {

namespace fs = std::filesystem;

// What a field reader needs to report errors and resolve paths.
struct Ctx {
  std::string source;
  std::string base_dir;
};

Status FieldError(const Ctx& c, const std::string& path, std::string_view what) {
  return Status::BadRequest(c.source + ": " + path + ": " + std::string(what));
}

// A node that is absent or null counts as unset.
bool IsSet(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

StatusOr<std::string> StringField(const Ctx& c, const YAML::Node& map, const std::string& path,
                                  const char* key) {
  const YAML::Node v = map[key];
  if (!IsSet(v)) return std::string();
  if (!v.IsScalar()) return FieldError(c, path + "." + key, "expected a string");
  return v.Scalar();
}

StatusOr<bool> BoolField(const Ctx& c, const YAML::Node& map, const std::string& path,
                         const char* key) {
  const YAML::Node v = map[key];
  bool out = false;
  if (!IsSet(v)) return false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out)) {
    return FieldError(c, path + "." + key, "expected true or false");
  }
  return out;
}

// A base64 field (Go's []byte in JSON), decoded; line breaks are ignored.
StatusOr<std::string> DataField(const Ctx& c, const YAML::Node& map, const std::string& path,
                                const char* key) {
  FLOTILLA_ASSIGN_OR_RETURN(std::string text, StringField(c, map, path, key));
  text.erase(std::remove_if(text.begin(), text.end(),
                            [](char ch) { return ch == '\n' || ch == '\r' || ch == ' '; }),
             text.end());
  std::optional<std::string> out = Base64Decode(text);
  if (!out) return FieldError(c, path + "." + key, "invalid base64 data");
  return *std::move(out);
}

// A file path, made absolute against the kubeconfig's directory.
StatusOr<std::string> PathField(const Ctx& c, const YAML::Node& map, const std::string& path,
                                const char* key) {
  FLOTILLA_ASSIGN_OR_RETURN(std::string p, StringField(c, map, path, key));
  if (p.empty() || fs::path(p).is_absolute()) return p;
  std::error_code ec;
  fs::path base = c.base_dir.empty() ? fs::current_path(ec) : fs::path(c.base_dir);
  return (base / p).lexically_normal().string();
}

Status ParseCluster(const Ctx& c, const YAML::Node& n, const std::string& path,
                    Kubeconfig::Cluster* out) {
  FLOTILLA_ASSIGN_OR_RETURN(out->server, StringField(c, n, path, "server"));
  FLOTILLA_ASSIGN_OR_RETURN(out->certificate_authority,
                            PathField(c, n, path, "certificate-authority"));
  FLOTILLA_ASSIGN_OR_RETURN(out->certificate_authority_data,
                            DataField(c, n, path, "certificate-authority-data"));
  FLOTILLA_ASSIGN_OR_RETURN(out->insecure_skip_tls_verify,
                            BoolField(c, n, path, "insecure-skip-tls-verify"));
  FLOTILLA_ASSIGN_OR_RETURN(out->tls_server_name, StringField(c, n, path, "tls-server-name"));
  return {};
}

Status ParseUser(const Ctx& c, const YAML::Node& n, const std::string& path,
                 Kubeconfig::User* out) {
  FLOTILLA_ASSIGN_OR_RETURN(out->client_certificate, PathField(c, n, path, "client-certificate"));
  FLOTILLA_ASSIGN_OR_RETURN(out->client_certificate_data,
                            DataField(c, n, path, "client-certificate-data"));
  FLOTILLA_ASSIGN_OR_RETURN(out->client_key, PathField(c, n, path, "client-key"));
  FLOTILLA_ASSIGN_OR_RETURN(out->client_key_data, DataField(c, n, path, "client-key-data"));
  FLOTILLA_ASSIGN_OR_RETURN(out->token, StringField(c, n, path, "token"));
  FLOTILLA_ASSIGN_OR_RETURN(out->token_file, PathField(c, n, path, "tokenFile"));
  out->has_plugin = IsSet(n["exec"]) || IsSet(n["auth-provider"]);
  return {};
}

Status ParseContext(const Ctx& c, const YAML::Node& n, const std::string& path,
                    Kubeconfig::Context* out) {
  FLOTILLA_ASSIGN_OR_RETURN(out->cluster, StringField(c, n, path, "cluster"));
  FLOTILLA_ASSIGN_OR_RETURN(out->user, StringField(c, n, path, "user"));
  FLOTILLA_ASSIGN_OR_RETURN(out->ns, StringField(c, n, path, "namespace"));
  return {};
}

template <typename T>
using BodyParser = Status (*)(const Ctx&, const YAML::Node&, const std::string&, T*);

// A list of {name: ..., <body_key>: {...}} entries. A name may appear once,
// as client-go requires.
template <typename T>
Status ParseNamedList(const Ctx& c, const YAML::Node& root, const char* list_key,
                      const char* body_key, BodyParser<T> parse, std::map<std::string, T>* out) {
  const YAML::Node list = root[list_key];
  if (!IsSet(list)) return {};
  if (!list.IsSequence()) return FieldError(c, list_key, "expected a list");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = std::string(list_key) + "[" + std::to_string(i) + "]";
    const YAML::Node item = list[i];
    if (!item.IsMap()) return FieldError(c, path, "expected a map");
    FLOTILLA_ASSIGN_OR_RETURN(std::string name, StringField(c, item, path, "name"));
    T value;
    const YAML::Node body = item[body_key];
    if (IsSet(body) && !body.IsMap()) return FieldError(c, path + "." + body_key, "expected a map");
    if (IsSet(body)) FLOTILLA_RETURN_IF_ERROR(parse(c, body, path + "." + body_key, &value));
    if (!out->emplace(name, std::move(value)).second) {
      return FieldError(c, list_key, "duplicate name \"" + name + "\"");
    }
  }
  return {};
}

StatusOr<Kubeconfig> ParseDocument(const Ctx& c, const YAML::Node& root) {
  Kubeconfig config;
  if (!IsSet(root)) return config;
  if (!root.IsMap()) return Status::BadRequest(c.source + ": expected a map at the top level");
  FLOTILLA_RETURN_IF_ERROR(ParseNamedList<Kubeconfig::Cluster>(c, root, "clusters", "cluster",
                                                               ParseCluster, &config.clusters));
  FLOTILLA_RETURN_IF_ERROR(
      ParseNamedList<Kubeconfig::User>(c, root, "users", "user", ParseUser, &config.users));
  FLOTILLA_RETURN_IF_ERROR(ParseNamedList<Kubeconfig::Context>(c, root, "contexts", "context",
                                                               ParseContext, &config.contexts));
  FLOTILLA_ASSIGN_OR_RETURN(config.current_context,
                            StringField(c, root, "(top level)", "current-context"));
  return config;
}

StatusOr<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::BadRequest("cannot read " + std::string(what) + " \"" + path +
                              "\": " + std::strerror(errno));
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

StatusOr<Kubeconfig> LoadFile(const std::string& path) {
  FLOTILLA_ASSIGN_OR_RETURN(std::string text, ReadFile(path, "kubeconfig"));
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(path), ec).parent_path();
  return ParseKubeconfig(text, path, dir.string());
}

// First file to name a cluster, user or context keeps it, whole.
void MergeInto(Kubeconfig* dst, Kubeconfig src) {
  for (auto& [name, v] : src.clusters) dst->clusters.emplace(name, std::move(v));
  for (auto& [name, v] : src.users) dst->users.emplace(name, std::move(v));
  for (auto& [name, v] : src.contexts) dst->contexts.emplace(name, std::move(v));
  if (dst->current_context.empty()) dst->current_context = std::move(src.current_context);
}

// The $KUBECONFIG list without empty entries and repeats, else ~/.kube/config.
std::vector<std::string> Precedence(const KubeconfigLoadOptions& opts) {
  std::vector<std::string> files;
  std::stringstream list(opts.kubeconfig_env);
  for (std::string f; std::getline(list, f, ':');) {
    if (!f.empty() && std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  }
  if (opts.kubeconfig_env.empty() && !opts.home.empty()) {
    files.push_back((fs::path(opts.home) / ".kube" / "config").string());
  }
  return files;
}

Status ConfigError(std::string message) { return Status::BadRequest(std::move(message)); }

std::string Q(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The PEM from `data`, else from the file at `path`; both set is an error.
StatusOr<std::string> PemFrom(const std::string& data, const std::string& path,
                              std::string_view field, std::string_view owner) {
  if (!data.empty() && !path.empty()) {
    return ConfigError(std::string(field) + "-data and " + std::string(field) +
                       " are both specified for " + std::string(owner));
  }
  if (!path.empty()) return ReadFile(path, std::string(field) + " of " + std::string(owner));
  return data;
}

// "host:port" without a scheme gets https:// when TLS material is configured
// and http:// otherwise, as client-go does; trailing slashes are dropped.
StatusOr<std::string> NormalizeServer(std::string server, bool tls, std::string_view cluster) {
  if (server.find("://") == std::string::npos) server = (tls ? "https://" : "http://") + server;
  if (server.rfind("https://", 0) != 0 && server.rfind("http://", 0) != 0) {
    return ConfigError("cluster " + Q(cluster) + " has server " + Q(server) +
                       ", which is neither http:// nor https://");
  }
  while (server.size() > 1 && server.back() == '/' && server[server.size() - 2] != '/') {
    server.pop_back();
  }
  return server;
}

Status ResolveCluster(const Kubeconfig::Cluster& cluster, std::string_view name, RestConfig* out) {
  std::string owner = "cluster " + Q(name);
  if (cluster.server.empty()) return ConfigError(owner + " has no server");
  bool has_ca =
      !cluster.certificate_authority.empty() || !cluster.certificate_authority_data.empty();
  if (cluster.insecure_skip_tls_verify && has_ca) {
    return ConfigError(
        owner + ": specifying a root certificates file with the insecure flag is not allowed");
  }
  FLOTILLA_ASSIGN_OR_RETURN(
      out->ca_pem, PemFrom(cluster.certificate_authority_data, cluster.certificate_authority,
                           "certificate-authority", owner));
  out->insecure = cluster.insecure_skip_tls_verify;
  out->tls_server_name = cluster.tls_server_name;
  return {};
}

Status ResolveUser(const Kubeconfig::User& user, std::string_view name, RestConfig* out) {
  std::string owner = "user " + Q(name);
  FLOTILLA_ASSIGN_OR_RETURN(
      out->client_cert_pem,
      PemFrom(user.client_certificate_data, user.client_certificate, "client-certificate", owner));
  FLOTILLA_ASSIGN_OR_RETURN(out->client_key_pem,
                            PemFrom(user.client_key_data, user.client_key, "client-key", owner));
  if (out->client_cert_pem.empty() != out->client_key_pem.empty()) {
    return ConfigError(
        owner + " has a client " +
        (out->client_key_pem.empty() ? "certificate but no key" : "key but no certificate"));
  }
  out->token = user.token;
  if (out->token.empty() && !user.token_file.empty()) {
    FLOTILLA_ASSIGN_OR_RETURN(std::string token,
                              ReadFile(user.token_file, "tokenFile of " + owner));
    size_t begin = token.find_first_not_of(" \t\r\n");
    size_t end = token.find_last_not_of(" \t\r\n");
    out->token = begin == std::string::npos ? "" : token.substr(begin, end - begin + 1);
  }
  if (user.has_plugin && out->token.empty() && out->client_cert_pem.empty()) {
    return ConfigError(owner +
                       " authenticates with an exec or auth-provider plugin, "
                       "which Flotilla does not run; use a token or a client certificate");
  }
  return {};
}

}  // namespace

KubeconfigLoadOptions KubeconfigLoadOptions::FromEnvironment() {
  KubeconfigLoadOptions opts;
  if (const char* env = std::getenv("KUBECONFIG")) opts.kubeconfig_env = env;
  if (const char* home = std::getenv("HOME")) opts.home = home;
  return opts;
}

StatusOr<Kubeconfig> ParseKubeconfig(std::string_view text, std::string_view source,
                                     std::string_view base_dir) {
  Ctx c{std::string(source), std::string(base_dir)};
  try {
    return ParseDocument(c, YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    return Status::BadRequest(c.source + ": " + e.what());
  } catch (const std::exception& e) {
    return Status::BadRequest(c.source + ": " + e.what());
  }
}

StatusOr<Kubeconfig> LoadKubeconfig(const KubeconfigLoadOptions& opts) {
  if (!opts.explicit_path.empty()) return LoadFile(opts.explicit_path);
  Kubeconfig merged;
  for (const std::string& file : Precedence(opts)) {
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;  // as kubectl: missing files in the list are skipped
    FLOTILLA_ASSIGN_OR_RETURN(Kubeconfig one, LoadFile(file));
    MergeInto(&merged, std::move(one));
  }
  return merged;
}

StatusOr<RestConfig> ResolveRestConfig(const Kubeconfig& config, std::string_view context) {
  std::string name(context.empty() ? config.current_context : context);
  if (name.empty()) {
    return ConfigError(
        "no context chosen: the kubeconfig sets no current-context and none was given");
  }
  auto ctx = config.contexts.find(name);
  if (ctx == config.contexts.end()) return ConfigError("context " + Q(name) + " does not exist");
  const Kubeconfig::Context& c = ctx->second;
  auto cluster = config.clusters.find(c.cluster);
  if (cluster == config.clusters.end()) {
    return ConfigError("cluster " + Q(c.cluster) + " of context " + Q(name) + " does not exist");
  }
  RestConfig out;
  FLOTILLA_RETURN_IF_ERROR(ResolveCluster(cluster->second, c.cluster, &out));
  if (!c.user.empty()) {
    auto user = config.users.find(c.user);
    if (user == config.users.end()) {
      return ConfigError("user " + Q(c.user) + " of context " + Q(name) + " does not exist");
    }
    FLOTILLA_RETURN_IF_ERROR(ResolveUser(user->second, c.user, &out));
  }
  bool tls = !out.ca_pem.empty() || !out.client_cert_pem.empty();
  FLOTILLA_ASSIGN_OR_RETURN(out.server, NormalizeServer(cluster->second.server, tls, c.cluster));
  if (!c.ns.empty()) out.ns = c.ns;
  return out;
}

StatusOr<RestConfig> LoadRestConfig(const KubeconfigLoadOptions& opts) {
  FLOTILLA_ASSIGN_OR_RETURN(Kubeconfig config, LoadKubeconfig(opts));
  return ResolveRestConfig(config, opts.context);
}

std::string KubeconfigFileToWrite(const KubeconfigLoadOptions& opts) {
  if (!opts.explicit_path.empty()) return opts.explicit_path;
  std::vector<std::string> files = Precedence(opts);
  if (files.empty()) return "";
  for (const std::string& f : files) {
    std::error_code ec;
    if (fs::exists(f, ec)) return f;
  }
  return files.back();
}

}  // namespace flotilla::client
