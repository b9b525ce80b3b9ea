// Audit policy, log file and events (audit.h).
#include "apiserver/audit.h"

#include <openssl/rand.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "base/mutex.h"

namespace flotilla::apiserver {
namespace {

constexpr std::string_view kStages[] = {"RequestReceived", "ResponseStarted", "ResponseComplete",
                                        "Panic"};

// A YAML (or JSON) document as JSON; scalars stay strings, which is all a
// Policy holds.
json::value FromYaml(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      json::array out;
      for (const YAML::Node& n : node) out.push_back(FromYaml(n));
      return out;
    }
    case YAML::NodeType::Map: {
      json::object out;
      for (const auto& kv : node) out[kv.first.as<std::string>()] = FromYaml(kv.second);
      return out;
    }
    case YAML::NodeType::Scalar:
      return json::string(node.as<std::string>());
    default:
      return nullptr;
  }
}

bool Has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

StatusOr<AuditLevel> ParseLevel(std::string_view s) {
  if (s == "None") return AuditLevel::kNone;
  if (s == "Metadata") return AuditLevel::kMetadata;
  if (s == "Request") return AuditLevel::kRequest;
  if (s == "RequestResponse") return AuditLevel::kRequestResponse;
  return Status::BadRequest("audit policy: unknown level \"" + std::string(s) +
                            "\" (None, Metadata, Request or RequestResponse)");
}

const char* LevelName(AuditLevel l) {
  switch (l) {
    case AuditLevel::kNone:
      return "None";
    case AuditLevel::kMetadata:
      return "Metadata";
    case AuditLevel::kRequest:
      return "Request";
    case AuditLevel::kRequestResponse:
      return "RequestResponse";
  }
  return "None";
}

StatusOr<std::vector<std::string>> Stages(const json::object& o) {
  std::vector<std::string> out = StringsAt(o, "omitStages");
  for (const std::string& s : out) {
    if (std::find(std::begin(kStages), std::end(kStages), s) == std::end(kStages)) {
      return Status::BadRequest("audit policy: unknown stage \"" + s + "\"");
    }
  }
  return out;
}

bool PathMatches(const std::string& path, const std::string& spec) {
  if (spec == "*" || spec == path) return true;
  return !spec.empty() && spec.back() == '*' &&
         path.compare(0, spec.size() - 1, spec, 0, spec.size() - 1) == 0;
}

bool ResourceMatches(const AuditRule& r, const RequestAttributes& a) {
  if (!r.non_resource_urls.empty()) return false;
  if (!r.namespaces.empty() && !Has(r.namespaces, a.ns)) return false;
  if (r.resources.empty()) return true;
  std::string combined = a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  for (const AuditRule::GroupResources& gr : r.resources) {
    if (gr.group != a.group) continue;
    if (gr.resources.empty()) return true;
    if (!gr.resource_names.empty() && !Has(gr.resource_names, a.name)) continue;
    for (const std::string& res : gr.resources) {
      if (res == "*" || res == combined) return true;
      if (res.size() > 1 && res[0] == '*' && res.substr(1) == "/" + a.subresource) return true;
      if (res.size() > 2 && res.ends_with("/*") && res.substr(0, res.size() - 2) == a.resource) {
        return true;
      }
    }
  }
  return false;
}

bool RuleMatches(const AuditRule& r, const UserInfo& user, const RequestAttributes& a) {
  if (!r.users.empty() && !Has(r.users, user.name)) return false;
  if (!r.user_groups.empty() &&
      std::none_of(user.groups.begin(), user.groups.end(),
                   [&](const std::string& g) { return Has(r.user_groups, g); })) {
    return false;
  }
  if (!r.verbs.empty() && !Has(r.verbs, a.verb)) return false;
  if (a.resource_request) return ResourceMatches(r, a);
  if (!r.resources.empty() || !r.namespaces.empty()) return false;
  if (r.non_resource_urls.empty()) return true;
  return std::any_of(r.non_resource_urls.begin(), r.non_resource_urls.end(),
                     [&](const std::string& spec) { return PathMatches(a.path, spec); });
}

std::string NewAuditId() {
  unsigned char b[16];
  RAND_bytes(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // UUID version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 0xf];
  }
  return out;
}

json::object UserJson(const UserInfo& u) {
  json::array groups;
  for (const std::string& g : u.groups) groups.emplace_back(g);
  json::object out{{"username", u.name}, {"groups", std::move(groups)}};
  if (!u.uid.empty()) out["uid"] = u.uid;
  return out;
}

// The JSON value of a body, or nothing when it is not JSON.
std::optional<json::value> BodyJson(const std::string& body) {
  if (body.empty() || (body[0] != '{' && body[0] != '[')) return std::nullopt;
  auto parsed = ParseJson(body);
  if (!parsed.ok()) return std::nullopt;
  return std::move(*parsed);
}

}  // namespace

StatusOr<AuditPolicy> AuditPolicy::Parse(std::string_view text) {
  json::value doc;
  try {
    doc = FromYaml(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    return Status::BadRequest(std::string("audit policy: ") + e.what());
  }
  if (!doc.is_object()) return Status::BadRequest("audit policy: not a Policy object");
  const json::object& o = doc.get_object();
  if (StringAt(o, "kind") != "Policy" ||
      (StringAt(o, "apiVersion") != "audit.k8s.io/v1" && !StringAt(o, "apiVersion").empty())) {
    return Status::BadRequest("audit policy: expected kind Policy of audit.k8s.io/v1");
  }
  AuditPolicy policy;
  FLOTILLA_ASSIGN_OR_RETURN(policy.omit_stages, Stages(o));
  const json::array* rules = GetArray(o, "rules");
  if (rules == nullptr) return policy;
  for (const json::value& v : *rules) {
    if (!v.is_object()) return Status::BadRequest("audit policy: a rule is not an object");
    const json::object& r = v.get_object();
    AuditRule rule;
    FLOTILLA_ASSIGN_OR_RETURN(rule.level, ParseLevel(StringAt(r, "level")));
    rule.users = StringsAt(r, "users");
    rule.user_groups = StringsAt(r, "userGroups");
    rule.verbs = StringsAt(r, "verbs");
    rule.namespaces = StringsAt(r, "namespaces");
    rule.non_resource_urls = StringsAt(r, "nonResourceURLs");
    FLOTILLA_ASSIGN_OR_RETURN(rule.omit_stages, Stages(r));
    if (const json::array* rs = GetArray(r, "resources")) {
      for (const json::value& g : *rs) {
        if (!g.is_object()) continue;
        rule.resources.push_back({StringAt(g.get_object(), "group"),
                                  StringsAt(g.get_object(), "resources"),
                                  StringsAt(g.get_object(), "resourceNames")});
      }
    }
    policy.rules.push_back(std::move(rule));
  }
  return policy;
}

std::pair<AuditLevel, std::vector<std::string>> AuditPolicy::Decide(
    const UserInfo& user, const RequestAttributes& attrs) const {
  for (const AuditRule& r : rules) {
    if (!RuleMatches(r, user, attrs)) continue;
    std::vector<std::string> omit = omit_stages;
    omit.insert(omit.end(), r.omit_stages.begin(), r.omit_stages.end());
    return {r.level, std::move(omit)};
  }
  return {AuditLevel::kNone, {}};
}

StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(AuditLogOptions opts, AuditPolicy policy,
                                                   Clock& clock) {
  std::unique_ptr<AuditLog> log(new AuditLog(std::move(opts), std::move(policy), clock));
  {
    MutexLock lock(log->mu_);
    FLOTILLA_RETURN_IF_ERROR(log->OpenFile());
  }
  return log;
}

AuditLog::~AuditLog() {
  if (file_ != nullptr && file_ != stdout) std::fclose(file_);
}

Status AuditLog::OpenFile() {
  if (opts_.path == "-") {
    file_ = stdout;
    return Status::Ok();
  }
  file_ = std::fopen(opts_.path.c_str(), "a");
  if (file_ == nullptr) return Status::Internal("cannot open the audit log " + opts_.path);
  std::error_code ec;
  size_ = static_cast<int64_t>(std::filesystem::file_size(opts_.path, ec));
  return Status::Ok();
}

void AuditLog::RotateLocked() {
  std::fclose(file_);
  file_ = nullptr;
  std::filesystem::path p(opts_.path);
  // lumberjack's backup name: NAME-2006-01-02T15-04-05.000.EXT, in UTC.
  std::string stamp = FormatRfc3339Micro(clock_.Now()).substr(0, 23);
  std::replace(stamp.begin(), stamp.end(), ':', '-');
  std::string stem = p.stem().string();
  std::filesystem::path backup = p.parent_path() / (stem + "-" + stamp + p.extension().string());
  std::error_code ec;
  std::filesystem::rename(p, backup, ec);
  if (opts_.max_backups > 0) {
    std::vector<std::filesystem::path> backups;
    for (const auto& entry : std::filesystem::directory_iterator(p.parent_path(), ec)) {
      std::string name = entry.path().filename().string();
      if (name.starts_with(stem + "-") && name.ends_with(p.extension().string())) {
        backups.push_back(entry.path());
      }
    }
    std::sort(backups.begin(), backups.end());  // the timestamps sort by time
    for (size_t i = 0; i + opts_.max_backups < backups.size(); ++i) {
      std::filesystem::remove(backups[i], ec);
    }
  }
  size_ = 0;
  file_ = std::fopen(opts_.path.c_str(), "a");
}

void AuditLog::Write(const json::object& event) {
  std::string line = json::serialize(event);
  line += '\n';
  MutexLock lock(mu_);
  if (opts_.max_size_mb > 0 && file_ != stdout && size_ > 0 &&
      size_ + static_cast<int64_t>(line.size()) > int64_t{opts_.max_size_mb} << 20) {
    RotateLocked();
  }
  if (file_ == nullptr) return;
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
  size_ += static_cast<int64_t>(line.size());
}

AuditRequest::AuditRequest(AuditLog* log, const std::string& method, const std::string& target,
                           const std::string& remote, const std::string& user_agent,
                           const RequestAttributes& attrs, const std::string& api_version)
    : log_(log) {
  if (log_ == nullptr) return;
  audit_id_ = NewAuditId();
  std::string ip = remote.substr(0, remote.rfind(':'));
  if (ip.size() > 1 && ip.front() == '[') ip = ip.substr(1, ip.size() - 2);
  event_ = json::object{{"kind", "Event"},
                        {"apiVersion", "audit.k8s.io/v1"},
                        {"auditID", audit_id_},
                        {"requestURI", target},
                        {"verb", attrs.verb.empty() ? method : attrs.verb},
                        {"sourceIPs", json::array{json::string(ip)}},
                        {"requestReceivedTimestamp", FormatRfc3339Micro(log_->clock().Now())}};
  if (!user_agent.empty()) event_["userAgent"] = user_agent;
  if (attrs.resource_request) {
    json::object ref{{"resource", attrs.resource}, {"apiVersion", api_version}};
    if (!attrs.ns.empty()) ref["namespace"] = attrs.ns;
    if (!attrs.name.empty()) ref["name"] = attrs.name;
    if (!attrs.group.empty()) ref["apiGroup"] = attrs.group;
    if (!attrs.subresource.empty()) ref["subresource"] = attrs.subresource;
    event_["objectRef"] = std::move(ref);
  }
  attrs_ = attrs;
}

void AuditRequest::Received(const UserInfo* user, const UserInfo* impersonated,
                            const std::string& body) {
  if (log_ == nullptr) return;
  static const UserInfo kAnonymous{"system:anonymous", "", {"system:unauthenticated"}};
  const UserInfo& who = user != nullptr ? *user : kAnonymous;
  // The policy is asked about the user the request acts as.
  std::tie(level_, omit_) =
      log_->policy().Decide(impersonated != nullptr ? *impersonated : who, attrs_);
  if (level_ == AuditLevel::kNone) return;
  event_["level"] = LevelName(level_);
  event_["user"] = UserJson(who);
  if (impersonated != nullptr) event_["impersonatedUser"] = UserJson(*impersonated);
  bool write = attrs_.verb == "create" || attrs_.verb == "update" || attrs_.verb == "patch" ||
               attrs_.verb == "delete" || attrs_.verb == "deletecollection";
  if (write && level_ >= AuditLevel::kRequest) {
    if (auto obj = BodyJson(body)) event_["requestObject"] = std::move(*obj);
  }
  if (json::value* ref = event_.if_contains("objectRef");
      ref != nullptr && attrs_.verb == "create" && !ref->as_object().contains("name")) {
    if (auto obj = BodyJson(body); obj && obj->is_object()) {
      std::string name = StringAt(obj->get_object(), "metadata.name");
      if (!name.empty()) ref->as_object()["name"] = name;
    }
  }
  Emit("RequestReceived", 0, nullptr);
}

void AuditRequest::Decided(const Decision& decision) {
  if (level_ == AuditLevel::kNone) return;
  json::object annotations{
      {"authorization.k8s.io/decision", decision.allowed ? "allow" : "forbid"}};
  if (!decision.reason.empty()) annotations["authorization.k8s.io/reason"] = decision.reason;
  event_["annotations"] = std::move(annotations);
}

void AuditRequest::ResponseStarted(int code) {
  if (level_ == AuditLevel::kNone) return;
  Emit("ResponseStarted", code, nullptr);
}

void AuditRequest::ResponseComplete(int code, const std::string& body) {
  if (level_ == AuditLevel::kNone) return;
  Emit("ResponseComplete", code, &body);
}

void AuditRequest::Emit(const char* stage, int code, const std::string* response_body) {
  if (Has(omit_, stage)) return;
  json::object event = event_;
  event["stage"] = stage;
  event["stageTimestamp"] = FormatRfc3339Micro(log_->clock().Now());
  if (code != 0) {
    json::object status{{"metadata", json::object()}, {"code", code}};
    if (code >= 400 && response_body != nullptr) {
      if (auto st = BodyJson(*response_body); st && st->is_object()) {
        for (const char* f : {"status", "message", "reason", "details"}) {
          if (const json::value* v = st->get_object().if_contains(f)) status[f] = *v;
        }
      }
    }
    event["responseStatus"] = std::move(status);
  }
  if (response_body != nullptr && level_ == AuditLevel::kRequestResponse) {
    if (auto obj = BodyJson(*response_body)) event["responseObject"] = std::move(*obj);
  }
  log_->Write(event);
}

}  // namespace flotilla::apiserver
