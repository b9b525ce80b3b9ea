// Field paths, sets and the FieldsV1 form (fieldpath.h).
#include "api/fieldpath.h"

#include <algorithm>

namespace flotilla::api::fieldpath {
namespace {

constexpr std::string_view kSelf = ".";

}  // namespace

Element Element::Key(const json::object& fields) {
  std::vector<std::pair<std::string_view, const json::value*>> sorted;
  sorted.reserve(fields.size());
  for (const auto& [name, value] : fields) sorted.emplace_back(name, &value);
  std::sort(sorted.begin(), sorted.end());
  std::string text = "{";
  for (const auto& [name, value] : sorted) {
    if (text.size() > 1) text += ',';
    text += json::serialize(json::string(name));
    text += ':';
    text += json::serialize(*value);
  }
  text += '}';
  return {Kind::kKey, std::move(text)};
}

Element Element::Value(const json::value& v) { return {Kind::kValue, json::serialize(v)}; }

std::string Element::Serialize() const {
  switch (kind) {
    case Kind::kField:
      return "f:" + text;
    case Kind::kKey:
      return "k:" + text;
    case Kind::kValue:
      return "v:" + text;
    case Kind::kIndex:
      return "i:" + text;
  }
  return text;
}

StatusOr<Element> Element::Parse(std::string_view s) {
  auto bad = [&](std::string_view why) {
    return Status::BadRequest("invalid managedFields path element \"" + std::string(s) +
                              "\": " + std::string(why));
  };
  if (s.size() < 2 || s[1] != ':') return bad("expected a prefix f:, k:, v: or i:");
  std::string_view rest = s.substr(2);
  switch (s[0]) {
    case 'f':
      return Field(rest);
    case 'k': {
      auto parsed = ParseJson(rest);
      if (!parsed.ok() || !parsed->is_object()) return bad("a key must be a JSON object");
      return Key(parsed->get_object());
    }
    case 'v': {
      auto parsed = ParseJson(rest);
      if (!parsed.ok()) return bad("a value must be JSON");
      return Value(*parsed);
    }
    case 'i':
      if (rest.empty() || !std::all_of(rest.begin(), rest.end(), ::isdigit)) {
        return bad("an index must be a number");
      }
      return Element{Kind::kIndex, std::string(rest)};
    default:
      return bad("expected a prefix f:, k:, v: or i:");
  }
}

std::string Element::String() const {
  switch (kind) {
    case Kind::kField:
      return "." + text;
    case Kind::kValue:
      return "[=" + text + "]";
    case Kind::kIndex:
      return "[" + text + "]";
    case Kind::kKey: {
      std::string out = "[";
      auto parsed = ParseJson(text);
      if (parsed.ok() && parsed->is_object()) {
        for (const auto& [name, value] : parsed->get_object()) {
          if (out.size() > 1) out += ',';
          out += std::string(name) + "=" + json::serialize(value);
        }
      }
      return out + "]";
    }
  }
  return text;
}

std::string PathString(const Path& path) {
  std::string out;
  for (const Element& e : path) out += e.String();
  return out;
}

void Set::Insert(const Path& path) {
  Set* node = this;
  for (const Element& e : path) node = &node->children_[e];
  node->member_ = true;
}

bool Set::Has(const Path& path) const {
  const Set* node = this;
  for (const Element& e : path) {
    node = node->Child(e);
    if (node == nullptr) return false;
  }
  return node->member_;
}

const Set* Set::Child(const Element& e) const {
  auto it = children_.find(e);
  return it == children_.end() ? nullptr : &it->second;
}

void Set::Prune() {
  for (auto it = children_.begin(); it != children_.end();) {
    it = it->second.Empty() ? children_.erase(it) : std::next(it);
  }
}

Set Set::Union(const Set& o) const {
  Set out = *this;
  out.member_ = member_ || o.member_;
  for (const auto& [e, child] : o.children_) {
    auto it = out.children_.find(e);
    if (it == out.children_.end()) {
      out.children_.emplace(e, child);
    } else {
      it->second = it->second.Union(child);
    }
  }
  return out;
}

void Set::Add(const Set& o) {
  member_ = member_ || o.member_;
  for (const auto& [e, child] : o.children_) children_[e].Add(child);
}

bool Set::Remove(const Set& o) {
  bool removed = member_ && o.member_;
  if (removed) member_ = false;
  for (const auto& [e, other] : o.children_) {
    auto it = children_.find(e);
    if (it == children_.end()) continue;
    removed = it->second.Remove(other) || removed;
    if (it->second.Empty()) children_.erase(it);
  }
  return removed;
}

Set Set::Difference(const Set& o) const {
  Set out;
  out.member_ = member_ && !o.member_;
  for (const auto& [e, child] : children_) {
    const Set* other = o.Child(e);
    out.children_.emplace(e, other == nullptr ? child : child.Difference(*other));
  }
  out.Prune();
  return out;
}

Set Set::Intersection(const Set& o) const {
  Set out;
  out.member_ = member_ && o.member_;
  for (const auto& [e, child] : children_) {
    if (const Set* other = o.Child(e)) out.children_.emplace(e, child.Intersection(*other));
  }
  out.Prune();
  return out;
}

Set Set::RecursiveDifference(const Set& o) const {
  Set out;
  out.member_ = member_ && !o.member_;
  for (const auto& [e, child] : children_) {
    const Set* other = o.Child(e);
    if (other == nullptr) {
      out.children_.emplace(e, child);
    } else if (!other->member_) {
      out.children_.emplace(e, child.RecursiveDifference(*other));
    }
  }
  out.Prune();
  return out;
}

void Set::ForEachUnder(Path& prefix, const std::function<void(const Path&)>& fn) const {
  for (const auto& [e, child] : children_) {
    prefix.push_back(e);
    if (child.member_) fn(prefix);
    child.ForEachUnder(prefix, fn);
    prefix.pop_back();
  }
}

void Set::ForEach(const std::function<void(const Path&)>& fn) const {
  Path prefix;
  if (member_) fn(prefix);
  ForEachUnder(prefix, fn);
}

size_t Set::Size() const {
  size_t n = member_ ? 1 : 0;
  for (const auto& [e, child] : children_) n += child.Size();
  return n;
}

json::object Set::ToFieldsV1() const {
  json::object out;
  for (const auto& [e, child] : children_) {
    json::object sub = child.ToFieldsV1();
    if (child.member_ && !sub.empty()) sub.emplace(kSelf, json::object());
    out.emplace(e.Serialize(), std::move(sub));
  }
  return out;
}

StatusOr<Set> Set::FromFieldsV1(const json::value& v) {
  if (!v.is_object()) {
    return Status::BadRequest("fieldsV1 must be a JSON object, got " +
                              std::string(JsonTypeName(v)));
  }
  Set out;
  for (const auto& [key, sub] : v.get_object()) {
    if (key == kSelf) {
      out.member_ = true;
      continue;
    }
    FLOTILLA_ASSIGN_OR_RETURN(Element e, Element::Parse(key));
    FLOTILLA_ASSIGN_OR_RETURN(Set child, FromFieldsV1(sub));
    // A leaf ({}) is a member; a node with children is one only with ".".
    if (child.children_.empty()) child.member_ = true;
    out.children_[std::move(e)] = std::move(child);
  }
  return out;
}

}  // namespace flotilla::api::fieldpath
