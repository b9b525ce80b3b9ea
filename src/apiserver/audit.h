// The audit log, as kube-apiserver keeps it: an audit.k8s.io/v1 Policy
// (YAML or JSON) decides each request's level (None, Metadata, Request,
// RequestResponse) by its first matching rule (users, userGroups, verbs,
// resources with group and resourceNames, namespaces, nonResourceURLs), and
// which stages are left out (omitStages, the policy's and the rule's). The
// log holds one audit.k8s.io/v1 Event per line and stage: RequestReceived,
// ResponseStarted (watches), ResponseComplete, with the auditID, user,
// impersonated user, source IPs, user agent, objectRef, responseStatus, the
// authorization decision, and the request and response bodies at the levels
// that ask for them. --audit-log-maxsize / --audit-log-maxbackup rotate the
// file as kube-apiserver's (lumberjack) does: NAME-TIMESTAMP.EXT backups,
// the oldest removed past the count.
//
// Thread-safe: requests on many threads write whole lines.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/auth.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/mutex.h"
#include "base/status.h"

namespace flotilla::apiserver {

enum class AuditLevel { kNone, kMetadata, kRequest, kRequestResponse };

struct AuditRule {
  struct GroupResources {
    std::string group;
    std::vector<std::string> resources, resource_names;
  };
  AuditLevel level = AuditLevel::kNone;
  std::vector<std::string> users, user_groups, verbs, namespaces, non_resource_urls, omit_stages;
  std::vector<GroupResources> resources;
};

struct AuditPolicy {
  std::vector<AuditRule> rules;
  std::vector<std::string> omit_stages;

  // Parses an audit.k8s.io/v1 Policy; BadRequest naming the problem (an
  // unknown level or stage, the wrong kind).
  static StatusOr<AuditPolicy> Parse(std::string_view text);
  // The first matching rule's level and the stages to leave out; None when
  // no rule matches.
  std::pair<AuditLevel, std::vector<std::string>> Decide(const UserInfo& user,
                                                         const RequestAttributes& attrs) const;
};

struct AuditLogOptions {
  std::string path;     // "-" is standard output
  int max_size_mb = 0;  // rotate past this size; 0: never
  int max_backups = 0;  // rotated files kept; 0: all
};

class AuditLog {
 public:
  static StatusOr<std::unique_ptr<AuditLog>> Open(AuditLogOptions opts, AuditPolicy policy,
                                                  Clock& clock);
  ~AuditLog();

  const AuditPolicy& policy() const { return policy_; }
  Clock& clock() { return clock_; }
  void Write(const json::object& event);

 private:
  AuditLog(AuditLogOptions opts, AuditPolicy policy, Clock& clock)
      : opts_(std::move(opts)), policy_(std::move(policy)), clock_(clock) {}
  Status OpenFile() REQUIRES(mu_);
  void RotateLocked() REQUIRES(mu_);

  AuditLogOptions opts_;
  AuditPolicy policy_;
  Clock& clock_;
  Mutex mu_;
  std::FILE* file_ GUARDED_BY(mu_) = nullptr;
  int64_t size_ GUARDED_BY(mu_) = 0;
};

// One request's audit events.
class AuditRequest {
 public:
  // Records nothing.
  AuditRequest() : log_(nullptr) {}
  // `log` null: nothing is recorded.
  AuditRequest(AuditLog* log, const std::string& method, const std::string& target,
               const std::string& remote, const std::string& user_agent,
               const RequestAttributes& attrs, const std::string& api_version);

  // Decides the level for the user (and the impersonated one, if any) and
  // writes RequestReceived.
  void Received(const UserInfo* user, const UserInfo* impersonated, const std::string& body);
  void Decided(const Decision& decision);
  // For streams (watches): the stage when the response begins.
  void ResponseStarted(int code);
  void ResponseComplete(int code, const std::string& body);
  // Whether the response body is needed (RequestResponse).
  bool WantsResponseBody() const { return level_ == AuditLevel::kRequestResponse; }
  // Whether the request is audited at all (a log, and a level above None).
  bool Recording() const { return level_ != AuditLevel::kNone; }
  const std::string& audit_id() const { return audit_id_; }

 private:
  void Emit(const char* stage, int code, const std::string* response_body);

  AuditLog* log_;
  RequestAttributes attrs_;
  AuditLevel level_ = AuditLevel::kNone;
  std::vector<std::string> omit_;
  std::string audit_id_;
  json::object event_;
};

}  // namespace flotilla::apiserver
