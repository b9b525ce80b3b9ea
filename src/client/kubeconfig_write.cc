// Writing kubeconfigs (kubeconfig.h). Every string value is double-quoted so
// that a token or name that looks like a number or a boolean stays a string
// for kubectl's YAML reader.
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "base/base64.h"
#include "base/file.h"
#include "client/kubeconfig.h"

namespace flotilla::client {
namespace {

void Field(YAML::Emitter& out, const char* key, std::string_view value) {
  out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << std::string(value);
}

void Cluster(YAML::Emitter& out, std::string_view name, std::string_view server,
             std::string_view ca_pem) {
  out << YAML::BeginMap;
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  if (!ca_pem.empty()) Field(out, "certificate-authority-data", Base64Encode(ca_pem));
  Field(out, "server", server);
  out << YAML::EndMap;
  Field(out, "name", name);
  out << YAML::EndMap;
}

void Context(YAML::Emitter& out, std::string_view name, std::string_view user,
             std::string_view ns) {
  out << YAML::BeginMap;
  out << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  Field(out, "cluster", name);
  if (!ns.empty()) Field(out, "namespace", ns);
  Field(out, "user", user);
  out << YAML::EndMap;
  Field(out, "name", name);
  out << YAML::EndMap;
}

void User(YAML::Emitter& out, std::string_view name, const KubeconfigCredentials& creds) {
  out << YAML::BeginMap;
  Field(out, "name", name);
  out << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
  if (!creds.client_cert_pem.empty()) {
    Field(out, "client-certificate-data", Base64Encode(creds.client_cert_pem));
  }
  if (!creds.client_key_pem.empty()) {
    Field(out, "client-key-data", Base64Encode(creds.client_key_pem));
  }
  if (!creds.token.empty()) Field(out, "token", creds.token);
  out << YAML::EndMap << YAML::EndMap;
}

}  // namespace

StatusOr<std::string> RenderKubeconfig(std::string_view cluster_name, std::string_view server,
                                       std::string_view ca_pem, std::string_view user_name,
                                       const KubeconfigCredentials& creds, std::string_view ns) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq;
  Cluster(out, cluster_name, server, ca_pem);
  out << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq;
  Context(out, cluster_name, user_name, ns);
  out << YAML::EndSeq;
  Field(out, "current-context", cluster_name);
  out << YAML::Key << "preferences" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::EndMap;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq;
  User(out, user_name, creds);
  out << YAML::EndSeq;
  out << YAML::EndMap;
  if (!out.good()) return Status::Invalid("cannot render kubeconfig: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

Status WriteKubeconfig(const std::string& path, std::string_view cluster_name,
                       std::string_view server, std::string_view ca_pem, std::string_view user_name,
                       const KubeconfigCredentials& creds, std::string_view ns) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return Status::Internal("cannot create " + parent.string() + ": " + ec.message());
  FLOTILLA_ASSIGN_OR_RETURN(std::string text,
                            RenderKubeconfig(cluster_name, server, ca_pem, user_name, creds, ns));
  return WriteFileAtomic(path, text, 0600);
}

namespace {

// Sets the entry named `name` of the list `key` of `doc` to `entry` (a map
// with "name" and `field`), appending it when there is none.
void Upsert(YAML::Node doc, const char* key, const std::string& name, const char* field,
            const YAML::Node& value) {
  YAML::Node list = doc[key];
  if (!list.IsSequence()) {
    list = YAML::Node(YAML::NodeType::Sequence);
    doc[key] = list;
  }
  YAML::Node entry;
  entry["name"] = name;
  entry[field] = value;
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].IsMap() && list[i]["name"] && list[i]["name"].as<std::string>("") == name) {
      list[i] = entry;
      return;
    }
  }
  list.push_back(entry);
}

// Emits `node` keeping what a kubeconfig's reader needs: a scalar that was
// quoted in the file (yaml-cpp tags it "!") or set here as a string (no
// tag) is written double-quoted; a plain one (tagged "?": numbers,
// booleans, most strings) as it was.
void EmitKeepingQuotes(YAML::Emitter& out, const YAML::Node& node) {
  if (node.IsMap()) {
    out << YAML::BeginMap;
    for (auto it = node.begin(); it != node.end(); ++it) {
      out << YAML::Key;
      EmitKeepingQuotes(out, it->first);
      out << YAML::Value;
      EmitKeepingQuotes(out, it->second);
    }
    out << YAML::EndMap;
  } else if (node.IsSequence()) {
    out << YAML::BeginSeq;
    for (const YAML::Node& item : node) EmitKeepingQuotes(out, item);
    out << YAML::EndSeq;
  } else if (node.IsScalar()) {
    if (node.Tag() == "?") {
      out << node.Scalar();
    } else {
      out << YAML::DoubleQuoted << node.Scalar();
    }
  } else {
    out << YAML::Null;
  }
}

}  // namespace

Status UpsertKubeconfigContexts(const std::string& path,
                                const std::vector<KubeconfigContextEntry>& entries) {
  std::error_code ec;
  std::string text;
  if (std::filesystem::exists(path, ec)) {
    FLOTILLA_ASSIGN_OR_RETURN(text, ::flotilla::ReadFile(path));
  }
  try {
    YAML::Node doc = text.empty() ? YAML::Node(YAML::NodeType::Map) : YAML::Load(text);
    if (doc.IsNull()) doc = YAML::Node(YAML::NodeType::Map);
    if (!doc.IsMap()) return Status::BadRequest(path + " is not a kubeconfig (not a map)");
    if (!doc["apiVersion"]) doc["apiVersion"] = "v1";
    if (!doc["kind"]) doc["kind"] = "Config";
    for (const KubeconfigContextEntry& e : entries) {
      YAML::Node cluster(YAML::NodeType::Map);
      cluster["server"] = e.cluster.server;
      if (!e.cluster.certificate_authority_data.empty()) {
        cluster["certificate-authority-data"] = Base64Encode(e.cluster.certificate_authority_data);
      } else if (!e.cluster.certificate_authority.empty()) {
        cluster["certificate-authority"] = e.cluster.certificate_authority;
      }
      if (e.cluster.insecure_skip_tls_verify)
        cluster["insecure-skip-tls-verify"] = YAML::Load("true");
      if (!e.cluster.tls_server_name.empty())
        cluster["tls-server-name"] = e.cluster.tls_server_name;
      Upsert(doc, "clusters", e.name, "cluster", cluster);
      YAML::Node context(YAML::NodeType::Map);
      context["cluster"] = e.name;
      context["user"] = e.user;
      if (!e.ns.empty()) context["namespace"] = e.ns;
      Upsert(doc, "contexts", e.name, "context", context);
    }
    YAML::Emitter out;
    EmitKeepingQuotes(out, doc);
    if (!out.good()) return Status::Invalid("cannot render kubeconfig: " + out.GetLastError());
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return Status::Internal("cannot create " + parent.string() + ": " + ec.message());
    return WriteFileAtomic(path, std::string(out.c_str()) + "\n", 0600);
  } catch (const YAML::Exception& e) {
    return Status::BadRequest(path + " is not a kubeconfig: " + e.what());
  }
}

}  // namespace flotilla::client
