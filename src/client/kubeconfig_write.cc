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

}  // namespace flotilla::client
