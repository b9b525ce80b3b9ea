// Shared by fake_client.cc and fake_watch.cc: the label and field selectors
// of a list or watch.
#pragma once

#include <string>

#include "api/fields.h"
#include "api/labels.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::runtime::fake_internal {

class Filter {
 public:
  static StatusOr<Filter> Make(const std::string& labels, const std::string& fields) {
    FLOTILLA_ASSIGN_OR_RETURN(api::LabelSelector l, api::LabelSelector::Parse(labels));
    FLOTILLA_ASSIGN_OR_RETURN(api::FieldSelector f, api::FieldSelector::Parse(fields));
    return Filter(std::move(l), std::move(f));
  }
  bool Matches(const json::object& obj) const {
    return labels_.MatchesObject(obj) && fields_.Matches(api::MetadataFieldGetter(obj));
  }

 private:
  Filter(api::LabelSelector l, api::FieldSelector f)
      : labels_(std::move(l)), fields_(std::move(f)) {}
  api::LabelSelector labels_;
  api::FieldSelector fields_;
};

}  // namespace flotilla::runtime::fake_internal
