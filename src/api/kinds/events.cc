// v1 Event: the legacy validation kube-apiserver applies to core Events and
// printEvent's columns.
#include <cctype>

#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/validation.h"

namespace flotilla::api::kinds {
namespace {

void CheckEventField(const json::object& obj, std::string_view key, size_t limit, Causes& out) {
  std::string value(GetString(obj, key).value_or(""));
  if (value.empty() && key != "message") out.push_back(FieldRequired(std::string(key), ""));
  if (value.size() > limit) {
    out.push_back(FieldInvalid(std::string(key), json::string(""),
                               "can have at most " + std::to_string(limit) + " characters"));
  }
}

// legacyValidateEvent, which is all kube-apiserver checks for v1 Events.
// Events with an eventTime (the new API) need their reporting fields.
Causes ValidateEvent(const json::object& obj, const json::object*) {
  Causes out;
  std::string ns = StringAt(obj, "metadata.namespace");
  std::string involved_ns = StringAt(obj, "involvedObject.namespace");
  bool mismatch = false;
  if (StringAt(obj, "eventTime").empty()) {
    mismatch = involved_ns.empty() ? !ns.empty() && ns != "default" : ns != involved_ns;
  } else {
    mismatch = involved_ns.empty() && ns != "default" && ns != "kube-system";
  }
  if (mismatch) {
    out.push_back(FieldInvalid("involvedObject.namespace", json::string(involved_ns),
                               "does not match event.namespace"));
  }
  if (!StringAt(obj, "eventTime").empty()) {
    std::string controller = StringAt(obj, "reportingComponent");
    if (controller.empty()) out.push_back(FieldRequired("reportingComponent", ""));
    for (std::string& msg : IsQualifiedName(controller)) {
      out.push_back(FieldInvalid("reportingComponent", json::string(controller), msg));
    }
    CheckEventField(obj, "reportingInstance", 128, out);
    CheckEventField(obj, "action", 128, out);
    CheckEventField(obj, "reason", 128, out);
    CheckEventField(obj, "message", 1024, out);
  }
  for (std::string& msg : IsDNS1123Subdomain(ns)) {
    out.push_back(FieldInvalid("namespace", json::string(ns), msg));
  }
  return out;
}

// printEvent's OBJECT: "kind/name" with the kind lowercased.
json::value EventObjectCell(const json::object& obj, TimePoint) {
  std::string kind = StringAt(obj, "involvedObject.kind");
  for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string name = StringAt(obj, "involvedObject.name");
  return json::string(name.empty() ? kind : kind + "/" + name);
}

std::string EventFirstSeen(const json::object& obj, TimePoint now) {
  if (!StringAt(obj, "firstTimestamp").empty()) {
    return TimestampSince(obj.if_contains("firstTimestamp"), now);
  }
  return TimestampSince(obj.if_contains("eventTime"), now);
}

json::value EventLastSeen(const json::object& obj, TimePoint now) {
  if (const json::object* series = GetObject(obj, "series")) {
    return json::string(TimestampSince(series->if_contains("lastObservedTime"), now));
  }
  if (StringAt(obj, "lastTimestamp").empty()) return json::string(EventFirstSeen(obj, now));
  return json::string(TimestampSince(obj.if_contains("lastTimestamp"), now));
}

json::value EventCount(const json::object& obj, TimePoint) {
  if (const json::object* series = GetObject(obj, "series")) return IntOr(*series, "count", 0);
  int64_t count = IntOr(obj, "count", 0);
  return count == 0 ? 1 : count;
}

json::value EventSource(const json::object& obj, TimePoint) {
  std::string component = StringAt(obj, "source.component");
  if (component.empty()) component = StringAt(obj, "reportingComponent");
  std::string host = StringAt(obj, "source.host");
  if (host.empty()) host = StringAt(obj, "reportingInstance");
  return json::string(host.empty() ? component : component + ", " + host);
}

json::value Trimmed(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n\v\f");
  if (b == std::string::npos) return json::string();
  size_t e = s.find_last_not_of(" \t\r\n\v\f");
  return json::string(s.substr(b, e - b + 1));
}

}  // namespace

Resource EventResource() {
  Resource r = MakeResource("", "v1", "Event", "events", true, "io.k8s.api.core.v1.Event");
  r.short_names = {"ev"};
  r.validate_fn = ValidateEvent;
  TableColumn name = NameColumn();
  name.priority = 1;
  r.columns = {
      Column("Last Seen", "string",
             "The time at which the most recent occurrence of this event "
             "was recorded.",
             0, EventLastSeen),
      Column("Type", "string",
             "Type of this event (Normal, Warning), new types could be added "
             "in the future",
             0, StringCell("type")),
      Column("Reason", "string",
             "This should be a short, machine understandable string that "
             "gives the reason for the transition into the object's current status.",
             0, StringCell("reason")),
      Column("Object", "string", "The object that this event is about.", 0, EventObjectCell),
      Column("Subobject", "string",
             "If referring to a piece of an object instead of an entire "
             "object, this string should contain a valid JSON/Go field access statement.",
             1, StringCell("involvedObject.fieldPath")),
      Column("Source", "string", "The component reporting this event.", 1, EventSource),
      Column("Message", "string",
             "A human-readable description of the status of this "
             "operation.",
             0,
             [](const json::object& obj, TimePoint) { return Trimmed(StringAt(obj, "message")); }),
      Column("First Seen", "string", "The time at which the event was first recorded.", 1,
             [](const json::object& obj, TimePoint now) -> json::value {
               return json::string(EventFirstSeen(obj, now));
             }),
      Column("Count", "string", "The number of times this event has occurred.", 1, EventCount),
      name};
  return r;
}

}  // namespace flotilla::api::kinds
