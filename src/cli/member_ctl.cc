// `flotilla member ctl`: drives a member's admin endpoint (member/admin.h)
// with the credentials of its kubeconfig.
//
//   ctl state
//   ctl api healthy | unavailable | slow [--latency 2s]
//   ctl reject --verb create --resource replicasets [-n NS]   (403 until `reject --off`)
//   ctl reject --off
//   ctl demand deployment/NAME 2500m [-n NS]      (also replicaset/, statefulset/)
//   ctl node add [NAME] [--cpu 8] [--memory 32Gi] [--pods 110]
//   ctl node set NAME [--cpu 8] [--memory 32Gi] [--pods 110]
//   ctl node remove NAME
//   ctl pod fail NAME [-n NS] [--reason R] [--message M]
//   ctl pod crash NAME [-n NS]
#include <iostream>

#include "base/io.h"
#include "cli/commands.h"
#include "client/kubeconfig.h"
#include "client/request_builder.h"
#include "client/rest_client.h"

namespace flotilla::cli {
namespace {

struct CtlFlags {
  std::string kubeconfig;
  std::string context;
  std::string ns = "default";
  bool ns_given = false;  // -n was on the command line (reject: otherwise every namespace)
  std::string reject_verb, reject_resource;
  bool reject_off = false;
  std::string latency = "1s";
  std::string cpu, memory, pods;
  std::string reason, message;
  std::vector<std::string> args;
};

const std::string kAdmin = "/flotilla/admin/v1/";

std::optional<std::string> WorkloadKind(const std::string& word) {
  if (word == "deployment" || word == "deployments" || word == "deploy") return "Deployment";
  if (word == "replicaset" || word == "replicasets" || word == "rs") return "ReplicaSet";
  if (word == "statefulset" || word == "statefulsets" || word == "sts") return "StatefulSet";
  return std::nullopt;
}

json::object NodeResources(const CtlFlags& f) {
  json::object body;
  if (!f.cpu.empty()) body["cpu"] = f.cpu;
  if (!f.memory.empty()) body["memory"] = f.memory;
  if (!f.pods.empty()) body["pods"] = f.pods;
  return body;
}

// The admin request the arguments ask for.
StatusOr<client::ApiRequest> BuildRequest(const CtlFlags& f) {
  const auto& a = f.args;
  auto usage = [](const std::string& what) { return Status::BadRequest("usage: ctl " + what); };
  auto req = [](std::string method, std::string path, const json::object& body) {
    return client::ApiRequest{
        std::move(method), kAdmin + path, {}, json::serialize(body), "application/json"};
  };
  std::string verb = a.empty() ? "" : a[0];
  if (verb == "state") return client::ApiRequest{"GET", kAdmin + "state", {}, "", ""};
  if (verb == "api") {
    if (a.size() != 2) return usage("api healthy|unavailable|slow [--latency 2s]");
    json::object body{{"mode", a[1]}};
    if (a[1] == "slow") body["latency"] = f.latency;
    return req("POST", "api", body);
  }
  if (verb == "reject" && a.size() == 1) {
    if (f.reject_off) return client::ApiRequest{"DELETE", kAdmin + "reject", {}, "", ""};
    if (f.reject_verb.empty() || f.reject_resource.empty()) {
      return usage("reject --verb VERB --resource RESOURCE [-n NS] | reject --off");
    }
    json::object body{{"verb", f.reject_verb}, {"resource", f.reject_resource}};
    if (f.ns_given) body["namespace"] = f.ns;
    return req("POST", "reject", body);
  }
  if (verb == "demand") {
    size_t slash = a.size() == 3 ? a[1].find('/') : std::string::npos;
    auto kind = slash == std::string::npos ? std::nullopt : WorkloadKind(a[1].substr(0, slash));
    if (!kind) return usage("demand deployment|replicaset|statefulset/NAME CPU [-n NS]");
    return req(
        "POST", "demand",
        {{"kind", *kind}, {"namespace", f.ns}, {"name", a[1].substr(slash + 1)}, {"cpu", a[2]}});
  }
  if (verb == "node" && a.size() >= 2) {
    json::object body = NodeResources(f);
    if (a[1] == "add" && a.size() <= 3) {
      if (a.size() == 3) body["name"] = a[2];
      return req("POST", "nodes", body);
    }
    if (a[1] == "set" && a.size() == 3) return req("PATCH", "nodes/" + a[2], body);
    if (a[1] == "remove" && a.size() == 3) {
      return client::ApiRequest{"DELETE", kAdmin + "nodes/" + PercentEncode(a[2]), {}, "", ""};
    }
  }
  if (verb == "pod" && a.size() == 3 && (a[1] == "fail" || a[1] == "crash")) {
    json::object body;
    if (!f.reason.empty()) body["reason"] = f.reason;
    if (!f.message.empty()) body["message"] = f.message;
    return req("POST", "pods/" + PercentEncode(f.ns) + "/" + PercentEncode(a[2]) + "/" + a[1],
               body);
  }
  return usage(
      "state | api MODE | reject ... | demand KIND/NAME CPU | node add|set|remove ... | pod "
      "fail|crash NAME");
}

int RunCtl(const CtlFlags& flags) {
  auto request = BuildRequest(flags);
  if (!request.ok()) {
    std::cerr << request.status().message() << "\n";
    return 2;
  }
  client::KubeconfigLoadOptions load = client::KubeconfigLoadOptions::FromEnvironment();
  load.explicit_path = flags.kubeconfig;
  load.context = flags.context;
  auto config = client::LoadRestConfig(load);
  if (!config.ok()) {
    std::cerr << "error: " << config.status().message() << "\n";
    return 1;
  }
  auto transport = client::NewRestTransport(*config);
  if (!transport.ok()) {
    std::cerr << "error: " << transport.status().message() << "\n";
    return 1;
  }
  auto response = (*transport)->Do(*request);
  if (!response.ok()) {
    std::cerr << "error: " << response.status().message() << "\n";
    return 1;
  }
  if (response->code < 200 || response->code >= 300) {
    auto status = ParseJsonObject(response->body);
    std::string message =
        status.ok() ? std::string(GetString(*status, "message").value_or("")) : response->body;
    std::cerr << "Error from server (" << response->code << "): " << message << "\n";
    return 1;
  }
  std::cout << response->body << "\n";
  return 0;
}

}  // namespace

void AddMemberCtlCommand(CLI::App& member) {
  auto flags = std::make_shared<CtlFlags>();
  auto* cmd = member.add_subcommand(
      "ctl", "Control a running member: demand, nodes, API faults, pod faults");
  cmd->add_option("--kubeconfig", flags->kubeconfig, "The member's kubeconfig");
  cmd->add_option("--context", flags->context, "Kubeconfig context");
  auto* ns = cmd->add_option("-n,--namespace", flags->ns,
                             "Namespace of the workload or pod; for `reject`, the only namespace "
                             "rejected (default: all)")
                 ->capture_default_str();
  cmd->add_option("--latency", flags->latency, "Added latency for `api slow`")
      ->capture_default_str();
  cmd->add_option("--cpu", flags->cpu, "Node CPU for `node add|set`");
  cmd->add_option("--memory", flags->memory, "Node memory for `node add|set`");
  cmd->add_option("--pods", flags->pods, "Node pod count for `node add|set`");
  cmd->add_option("--reason", flags->reason, "Reason for `pod fail`");
  cmd->add_option("--message", flags->message, "Message for `pod fail`");
  cmd->add_option("--verb", flags->reject_verb,
                  "Kube verb `reject` refuses: create, update, patch, delete, get, list, watch, "
                  "deletecollection or *");
  cmd->add_option("--resource", flags->reject_resource,
                  "Resource `reject` refuses: replicasets, replicasets.apps, replicasets/status");
  cmd->add_flag("--off", flags->reject_off, "`reject --off`: serve every request again");
  cmd->add_option("args", flags->args, "Operation and its arguments");
  cmd->callback([flags, ns] {
    flags->ns_given = ns->count() > 0;
    ExitProcess(RunCtl(*flags));
  });
}

}  // namespace flotilla::cli
