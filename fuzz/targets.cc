#include "fuzz/targets.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace flotilla::fuzz {
namespace {

constexpr Target kTargets[] = {
    {"api_object", &ApiObject},     {"patch", &Patch},
    {"protobuf", &Protobuf},        {"selectors", &Selectors},
    {"kubeconfig", &Kubeconfig},    {"token_file", &TokenFile},
    {"annotations", &Annotations},  {"service_account_token", &ServiceAccountToken},
    {"audit_policy", &AuditPolicy}, {"apply", &Apply},
    {"http2_server", &Http2Server}, {"tunnel", &Tunnel},
    {"http1_server", &Http1Server},
};

}  // namespace

std::span<const Target> Targets() { return kTargets; }

const Target* FindTarget(std::string_view name) {
  for (const Target& t : kTargets) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

void Broken(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fuzz: %.*s\n  %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

std::string_view AsText(std::span<const uint8_t> data) {
  return {reinterpret_cast<const char*>(data.data()), data.size()};
}

namespace {
std::mutex removal_mu;
std::vector<std::string>* removals = nullptr;  // outlives static destruction
}  // namespace

void RemoveAtExit(std::string dir) {
  std::lock_guard lock(removal_mu);
  if (removals == nullptr) {
    removals = new std::vector<std::string>();
    std::atexit([] {
      std::lock_guard lock(removal_mu);
      std::error_code ec;
      for (const std::string& d : *removals) std::filesystem::remove_all(d, ec);
    });
  }
  removals->push_back(std::move(dir));
}

}  // namespace flotilla::fuzz
