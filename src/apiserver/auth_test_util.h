// Test helpers: users and request attributes for authorization tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "apiserver/auth.h"

namespace flotilla::apiserver::testing {

// An authenticated user: `groups` plus system:authenticated.
inline UserInfo User(std::string name, std::vector<std::string> groups) {
  groups.emplace_back("system:authenticated");
  return {std::move(name), "", std::move(groups)};
}

inline RequestAttributes Resource(std::string verb, std::string group, std::string resource,
                                  std::string ns = "", std::string name = "") {
  RequestAttributes a;
  a.verb = std::move(verb);
  a.group = std::move(group);
  a.resource = std::move(resource);
  a.ns = std::move(ns);
  a.name = std::move(name);
  return a;
}

inline RequestAttributes Path(std::string verb, std::string path) {
  RequestAttributes a;
  a.verb = std::move(verb);
  a.resource_request = false;
  a.path = std::move(path);
  return a;
}

}  // namespace flotilla::apiserver::testing
