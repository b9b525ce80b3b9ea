#include "apiserver/table.h"

#include "api/kinds/kinds.h"
#include "apiserver/meta.h"

namespace flotilla::apiserver {
namespace {

json::object ColumnDefinition(const api::TableColumn& c) {
  return json::object{{"name", c.name},
                      {"type", c.type.empty() ? "string" : c.type},
                      {"format", c.format},
                      {"description", c.description},
                      {"priority", c.priority}};
}

json::value RowObject(const json::object& obj, IncludeObject include) {
  if (include == IncludeObject::kObject) return obj;
  const json::object* meta = FindMeta(obj);
  return json::object{{"kind", "PartialObjectMetadata"},
                      {"apiVersion", "meta.k8s.io/v1"},
                      {"metadata", meta ? json::value(*meta) : json::value(json::object())}};
}

}  // namespace

bool WantsTable(std::string_view accept) {
  size_t table = accept.find("as=Table");
  if (table == std::string_view::npos) return false;
  // A plain application/json listed before the Table entry wins.
  size_t plain = accept.find("application/json,");
  return plain == std::string_view::npos || plain > table;
}

IncludeObject ParseIncludeObject(const std::string& value) {
  if (value == "None") return IncludeObject::kNone;
  if (value == "Object") return IncludeObject::kObject;
  return IncludeObject::kMetadata;
}

std::string AgeOf(const json::object& obj, TimePoint now) {
  TimePoint created;
  if (!ParseRfc3339(MetaString(obj, "creationTimestamp"), &created)) return "<unknown>";
  return api::HumanDuration(now - created);
}

json::object ToTable(const api::Resource& res, const std::vector<json::object>& objects,
                     TimePoint now, IncludeObject include, bool with_columns) {
  std::vector<api::TableColumn> columns = res.columns;
  if (columns.empty()) {
    columns.push_back(
        {"Name", "string", "name", "Name must be unique within a namespace.", 0,
         [](const json::object& o, TimePoint) { return json::value(MetaString(o, "name")); }});
    columns.push_back(
        {"Age", "date", "",
         "CreationTimestamp is a timestamp representing the server time when this object was "
         "created.",
         0, [](const json::object& o, TimePoint t) { return json::value(AgeOf(o, t)); }});
  }
  json::array defs;
  if (with_columns) {
    for (const auto& c : columns) defs.push_back(ColumnDefinition(c));
  }
  json::array rows;
  for (const auto& obj : objects) {
    json::array cells;
    for (const auto& c : columns) cells.push_back(c.cell ? c.cell(obj, now) : json::value(""));
    json::object row{{"cells", std::move(cells)}};
    if (include != IncludeObject::kNone) row["object"] = RowObject(obj, include);
    rows.push_back(std::move(row));
  }
  return json::object{{"kind", "Table"},
                      {"apiVersion", "meta.k8s.io/v1"},
                      {"metadata", json::object()},
                      {"columnDefinitions", std::move(defs)},
                      {"rows", std::move(rows)}};
}

}  // namespace flotilla::apiserver
