// apiextensions.k8s.io/v1 CustomResourceDefinition, and the resources a
// CRD defines (docs/crds.md).
#include <algorithm>

#include "api/crd/crd.h"
#include "api/kinds/kinds.h"
#include "api/kinds/resources.h"
#include "api/kinds/util.h"

namespace flotilla::api {
namespace {

using kinds::AgeColumn;
using kinds::Column;
using kinds::NameColumn;

// "stable.example.com" -> "com.example.stable": how kube-apiserver names a
// custom kind's OpenAPI definition (plus version and kind).
std::string ReversedGroup(const std::string& group) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t dot = group.find('.', start);
    parts.push_back(group.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += (out.empty() ? "" : ".") + *it;
  return out;
}

void DefaultCrd(json::object& obj) {
  json::value* spec = obj.if_contains("spec");
  if (spec == nullptr || !spec->is_object()) return;
  json::object& s = spec->get_object();
  if (json::value* names = s.if_contains("names"); names && names->is_object()) {
    json::object& n = names->get_object();
    std::string kind(GetString(n, "kind").value_or(""));
    if (!kind.empty()) {
      std::string lower = kind;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      kinds::SetIfEmpty(n, "singular", lower);
      kinds::SetIfEmpty(n, "listKind", kind + "List");
    }
  }
  json::object& conversion = EnsureObject(s, "conversion");
  kinds::SetIfEmpty(conversion, "strategy", "None");
}

std::vector<std::string> CrdWarnings(const json::object& obj) {
  auto d = crd::Read(obj);
  std::vector<std::string> out;
  if (!d.ok()) return out;
  for (const crd::Version& v : d->versions) {
    if (v.schema && v.schema->has_cel_rules) {
      out.push_back("spec.versions[" + v.name +
                    "]: x-kubernetes-validations (CEL) rules are kept but not enforced by this "
                    "server (docs/crds.md)");
    }
  }
  return out;
}

json::value CellOf(const crd::PrinterColumn& col, const json::object& obj, TimePoint now) {
  const json::value* v = crd::Evaluate(obj, col.json_path);
  if (v == nullptr || v->is_null()) return nullptr;
  if (col.type == "date") return json::string(kinds::TimestampSince(v, now));
  if (col.type == "integer" || col.type == "number" || col.type == "boolean") return *v;
  if (v->is_string()) return *v;
  return json::string(json::serialize(*v));
}

std::vector<TableColumn> ColumnsOf(const crd::Version& v) {
  std::vector<TableColumn> out{NameColumn()};
  if (v.columns.empty()) {
    out.push_back(AgeColumn());
    return out;
  }
  for (const crd::PrinterColumn& col : v.columns) {
    TableColumn c =
        Column(col.name, col.type == "date" ? "date" : col.type, col.description, col.priority,
               [col](const json::object& obj, TimePoint now) { return CellOf(col, obj, now); });
    c.format = col.format;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

namespace kinds {

Resource CustomResourceDefinitionResource() {
  Resource r =
      MakeResource(crd::kGroup, "v1", "CustomResourceDefinition", "customresourcedefinitions",
                   false, "io.k8s.api.apiextensions.v1.CustomResourceDefinition");
  r.short_names = {"crd", "crds"};
  r.categories = {"api-extensions"};
  r.has_status = true;
  r.default_fn = DefaultCrd;
  r.mutate_on_create = [](json::object& obj) {
    json::object& meta = EnsureObject(obj, "metadata");
    json::value& f = meta["finalizers"];
    if (!f.is_array()) f = json::array{};
    json::array& list = f.get_array();
    if (std::find(list.begin(), list.end(), json::value(crd::kCleanupFinalizer)) == list.end()) {
      list.push_back(json::string(crd::kCleanupFinalizer));
    }
  };
  r.validate_fn = [](const json::object& obj, const json::object* old) {
    return crd::Validate(obj, old);
  };
  r.warn_fn = CrdWarnings;
  r.columns = {NameColumn(),
               Column("Created At", "date", "", 0, [](const json::object& obj, TimePoint) {
                 return json::value(StringAt(obj, "metadata.creationTimestamp"));
               })};
  return r;
}

}  // namespace kinds

std::vector<std::shared_ptr<Resource>> CustomResources(const crd::Definition& d) {
  std::vector<std::shared_ptr<Resource>> out;
  const crd::Version* storage = d.StorageVersion();
  if (storage == nullptr) return out;
  for (const crd::Version& v : d.versions) {
    if (!v.served || !v.schema) continue;
    auto r = std::make_shared<Resource>();
    r->group = d.group;
    r->version = v.name;
    r->kind = d.kind;
    r->plural = d.plural;
    r->singular = d.singular;
    r->namespaced = d.namespaced;
    r->short_names = d.short_names;
    r->categories = d.categories;
    r->has_status = v.status;
    r->has_scale = v.scale;
    if (v.scale) {
      r->scale_spec_path = v.spec_replicas_path;
      r->scale_status_path = v.status_replicas_path;
      r->scale_selector_path = v.label_selector_path;
    }
    r->storage_version = storage->name;
    r->mixed_storage = d.versions.size() > 1 ||
                       std::any_of(d.stored_versions.begin(), d.stored_versions.end(),
                                   [&](const std::string& s) { return s != storage->name; });
    if (storage->name != v.name || r->mixed_storage) {
      // conversion.strategy None: only apiVersion changes.
      std::string group = d.group;
      r->convert = [group](json::object obj, std::string_view to) -> StatusOr<json::object> {
        obj["apiVersion"] = group + "/" + std::string(to);
        return obj;
      };
    }
    r->schema_name = ReversedGroup(d.group) + "." + v.name + "." + d.kind;
    r->schema_definition = crd::Published(
        v.raw_schema, true, "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    r->schema_definition["x-kubernetes-group-version-kind"] =
        json::array{json::object{{"group", d.group}, {"kind", d.kind}, {"version", v.name}}};
    std::shared_ptr<const crd::Schema> schema = v.schema;
    r->prune_fn = [schema](json::object& obj, std::vector<std::string>* unknown) {
      crd::Prune(*schema, obj, unknown);
    };
    r->default_fn = [schema](json::object& obj) { crd::Default(*schema, obj); };
    r->validate_fn = [schema](const json::object& obj, const json::object*) {
      return crd::Validate(*schema, obj);
    };
    std::vector<std::string> warnings;
    if (v.deprecated) {
      warnings.push_back(!v.deprecation_warning.empty()
                             ? v.deprecation_warning
                             : d.group + "/" + v.name + " " + d.kind + " is deprecated");
    }
    if (v.schema->has_cel_rules) {
      warnings.push_back("x-kubernetes-validations (CEL) rules of " + d.name +
                         " are not enforced by this server (docs/crds.md)");
    }
    if (!warnings.empty()) {
      r->warn_fn = [warnings](const json::object&) { return warnings; };
    }
    r->columns = ColumnsOf(v);
    r->crd = d.name;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace flotilla::api
