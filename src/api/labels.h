// Label selectors, as k8s.io/apimachinery/pkg/labels implements them.
//
// A LabelSelector is a conjunction of requirements on an object's labels. It
// comes from the string syntax of `?labelSelector=` and `kubectl -l`
// ("app=web,tier!=db,env in (prod,qa),!canary,replicas>2") or from a
// metav1.LabelSelector JSON object (matchLabels + matchExpressions) inside a
// spec. Parse errors are BadRequest with apimachinery's messages; JSON
// selectors are validated like ValidateLabelSelector and fail with Invalid and
// field causes. A LabelSelector is an immutable value; it is safe to share
// between threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

enum class SelectorOperator {
  kIn,            // key in (a,b)
  kNotIn,         // key notin (a,b); also matches when key is absent
  kEquals,        // key=a
  kDoubleEquals,  // key==a
  kNotEquals,     // key!=a; also matches when key is absent
  kExists,        // key
  kDoesNotExist,  // !key
  kGreaterThan,   // key>1 (integer comparison)
  kLessThan,      // key<1 (integer comparison)
};

struct LabelRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kExists;
  std::vector<std::string> values;

  // `labels` is an object of string values; null means no labels.
  bool Matches(const json::object* labels) const;
  // "key in (a,b)", "!key", "key>1", ... with values sorted.
  std::string ToString() const;
};

class LabelSelector {
 public:
  // Matches every object, like Everything().
  LabelSelector() = default;
  // Matches every object (the empty selector).
  static LabelSelector Everything() { return LabelSelector(false); }
  // Matches no object (a null metav1.LabelSelector).
  static LabelSelector Nothing() { return LabelSelector(true); }

  // Parses the string syntax. "" is Everything(). Requirements are sorted
  // by key.
  static StatusOr<LabelSelector> Parse(std::string_view text);
  // Converts a metav1.LabelSelector found at `field` (e.g. "spec.selector");
  // null or absent (`selector` == nullptr) is Nothing(), {} is Everything().
  // Invalid selectors give Status Invalid whose message aggregates the causes
  // (callers usually re-wrap them with InvalidStatus for their kind).
  static StatusOr<LabelSelector> FromJson(const json::value* selector, std::string_view field);

  // `labels` is metadata.labels; null means no labels. Non-string values
  // count as absent.
  bool Matches(const json::object* labels) const;
  // Convenience: matches obj.metadata.labels.
  bool MatchesObject(const json::object& obj) const;
  // True when the selector matches everything.
  bool Empty() const { return !nothing_ && requirements_.empty(); }
  bool MatchesNothing() const { return nothing_; }
  // Canonical form: requirements joined by ","; "" for Everything and Nothing.
  std::string ToString() const;
  // The value `key` must have when the selector pins it to exactly one value
  // (key=v, key==v or key in (v)).
  std::optional<std::string> RequiresExactMatch(std::string_view key) const;
  const std::vector<LabelRequirement>& requirements() const { return requirements_; }

 private:
  explicit LabelSelector(bool nothing) : nothing_(nothing) {}
  // Stable sort by key, so that equal selectors print the same.
  static void SortRequirements(std::vector<LabelRequirement>& reqs);

  bool nothing_ = false;
  std::vector<LabelRequirement> requirements_;
};

// ValidateLabelSelector for a metav1.LabelSelector at `field`: matchLabels as
// labels, each matchExpressions entry with a valid key, a known operator
// (In, NotIn, Exists, DoesNotExist) and values exactly when In/NotIn.
std::vector<StatusCause> ValidateLabelSelector(const json::value& selector, std::string_view field);

}  // namespace flotilla::api
