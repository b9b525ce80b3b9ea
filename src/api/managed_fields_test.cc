// Server-side apply's rules as data: runs src/api/testdata/apply_cases.yaml
// (its header says what a case is), plus the managedFields wire form.
#include "api/managed_fields.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "api/patch.h"
#include "api/schema.h"
#include "base/yaml.h"

namespace flotilla::api {
namespace {

json::array LoadCases() {
  const char* dir = std::getenv("FLOTILLA_SOURCE_DIR");
  std::string path = std::string(dir ? dir : ".") + "/src/api/testdata/apply_cases.yaml";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto doc = ParseYaml(text.str());
  if (!doc.ok() || !doc->is_object() || !doc->as_object().contains("cases")) {
    ADD_FAILURE() << "cannot read " << path << ": " << doc.status().message();
    return {};
  }
  return doc->as_object().at("cases").as_array();
}

// "Apply a" -> the paths that entry owns, sorted.
std::map<std::string, std::vector<std::string>> Owners(const json::object& obj) {
  std::map<std::string, std::vector<std::string>> out;
  const json::value* managed = Find(obj, "metadata.managedFields");
  if (managed == nullptr) return out;
  auto entries = DecodeManagedFields(*managed);
  EXPECT_TRUE(entries.ok()) << entries.status().message();
  if (!entries.ok()) return out;
  for (const ManagedFieldsEntry& e : *entries) {
    std::vector<std::string>& paths = out[e.operation + " " + e.manager];
    e.fields.ForEach([&](const fieldpath::Path& p) { paths.push_back(fieldpath::PathString(p)); });
    std::sort(paths.begin(), paths.end());
  }
  return out;
}

json::object WithoutBookkeeping(json::object obj) {
  if (json::value* meta = obj.if_contains("metadata"); meta && meta->is_object()) {
    meta->as_object().erase("managedFields");
    meta->as_object().erase("uid");
  }
  return obj;
}

void RunStep(const FieldManager& manager, const json::object& spec, const json::object& step,
             size_t index, json::object& live) {
  SCOPED_TRACE("step " + std::to_string(index + 1));
  bool apply = step.contains("apply");
  FieldManagerRequest req;
  req.manager = StringAt(step, apply ? "apply" : "update");
  req.force = GetBool(step, "force").value_or(false);
  req.now = "2026-01-01T00:00:0" + std::to_string(index % 10) + "Z";
  const json::object& object = step.at("object").as_object();
  // The endpoint's version and kind: the case's, else the object's.
  req.api_version = StringAt(spec, "api_version");
  if (req.api_version.empty()) req.api_version = StringAt(object, "apiVersion");
  req.kind = StringAt(spec, "kind");

  StatusOr<json::object> result = apply ? manager.Apply(live, object, req)
                                        : StatusOr<json::object>(manager.Update(live, object, req));
  if (const json::value* want_error = step.if_contains("error")) {
    ASSERT_FALSE(result.ok()) << "the write succeeded: " << json::serialize(*result);
    EXPECT_NE(result.status().message().find(want_error->as_string()), std::string::npos)
        << result.status().message();
    if (auto reason = GetString(step, "reason"); reason && *reason == "Conflict") {
      EXPECT_TRUE(result.status().Is(Reason::kConflict)) << result.status().message();
      EXPECT_FALSE(result.status().causes().empty());
      for (const StatusCause& c : result.status().causes()) {
        EXPECT_EQ(c.type, "FieldManagerConflict");
      }
    } else {
      EXPECT_TRUE(result.status().Is(Reason::kBadRequest)) << result.status().message();
    }
    return;
  }
  if (GetString(step, "reason")) {
    ASSERT_FALSE(result.ok()) << "the write succeeded: " << json::serialize(*result);
    EXPECT_TRUE(result.status().Is(Reason::kConflict)) << result.status().message();
    return;
  }
  ASSERT_TRUE(result.ok()) << result.status().message();
  live = std::move(*result);
  EnsureObject(live, "metadata")["uid"] = "u1";  // it is stored now
  if (const json::value* want = step.if_contains("want")) {
    EXPECT_TRUE(JsonEqual(WithoutBookkeeping(live), *want))
        << "got  " << json::serialize(WithoutBookkeeping(live)) << "\nwant "
        << json::serialize(*want);
  }
  if (const json::object* owners = GetObject(step, "owners")) {
    std::map<std::string, std::vector<std::string>> want;
    for (const auto& [who, paths] : *owners) {
      std::vector<std::string>& p = want[who];
      for (const json::value& path : paths.as_array()) p.emplace_back(path.as_string());
      std::sort(p.begin(), p.end());
    }
    EXPECT_EQ(Owners(live), want);
  }
  if (GetBool(step, "untracked").value_or(false)) {
    EXPECT_EQ(Find(live, "metadata.managedFields"), nullptr) << json::serialize(live);
  }
}

TEST(ServerSideApply, CasesFromTheDocumentedRules) {
  json::array cases = LoadCases();
  ASSERT_GE(cases.size(), 15u);
  const json::object& definitions = SchemaSet::Builtin().Definitions();
  for (const json::value& c : cases) {
    const json::object& spec = c.as_object();
    SCOPED_TRACE(StringAt(spec, "name"));
    const json::object* root = GetObject(spec, "schema");
    if (root == nullptr) {
      root = SchemaSet::Builtin().Definition(StringAt(spec, "root"));
      ASSERT_NE(root, nullptr) << "no definition " << StringAt(spec, "root");
    }
    FieldManager manager(Typed(&definitions, root));
    json::object live;
    if (const json::object* given = GetObject(spec, "live")) live = *given;
    const json::array& steps = spec.at("steps").as_array();
    for (size_t i = 0; i < steps.size(); ++i) RunStep(manager, spec, steps[i].as_object(), i, live);
  }
}

TEST(ServerSideApply, ManagedFieldsAreWrittenSortedAsKubernetesDoes) {
  std::vector<ManagedFieldsEntry> entries(3);
  entries[0] = {"z", "Update", "v1", "", "2026-01-01T00:00:02Z", {}};
  entries[1] = {"b", "Apply", "v1", "", "2026-01-01T00:00:05Z", {}};
  entries[2] = {"a", "Update", "v1", "status", "2026-01-01T00:00:01Z", {}};
  for (ManagedFieldsEntry& e : entries) e.fields.Insert({fieldpath::Element::Field("x")});
  json::array out = EncodeManagedFields(entries);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].at("manager"), "b");
  EXPECT_EQ(out[1].at("manager"), "a");
  EXPECT_EQ(out[1].at("subresource"), "status");
  EXPECT_EQ(out[2].at("manager"), "z");
  EXPECT_EQ(out[2].at("fieldsType"), "FieldsV1");
  EXPECT_EQ(json::serialize(out[2].at("fieldsV1")), R"({"f:x":{}})");
  auto back = DecodeManagedFields(out);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->size(), 3u);
  EXPECT_FALSE(DecodeManagedFields(json::value("x")).ok());
  EXPECT_FALSE(DecodeManagedFields(*ParseJson(R"([{"manager":"a","operation":"Patch"}])")).ok());
  EXPECT_FALSE(
      DecodeManagedFields(*ParseJson(R"([{"manager":"a","operation":"Apply","fieldsType":"X"}])"))
          .ok());
}

TEST(ServerSideApply, UpdateManagersAreCappedIntoAncientChanges) {
  const json::object* root = SchemaSet::Builtin().Definition("io.k8s.api.core.v1.ConfigMap");
  FieldManager manager(Typed(&SchemaSet::Builtin().Definitions(), root));
  json::object live;
  for (int i = 0; i < 13; ++i) {
    json::object next = live;
    next["apiVersion"] = "v1";
    next["kind"] = "ConfigMap";
    EnsureObject(EnsureObject(next, "metadata"), "labels");
    EnsureObject(next, "data")["k" + std::to_string(i)] = "v";
    if (json::value* meta = next.if_contains("metadata")) meta->as_object().erase("managedFields");
    FieldManagerRequest req{
        "writer-" + std::to_string(i), "v1", "",
        "2026-01-01T00:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "Z"};
    live = manager.Update(live, next, req);
    EnsureObject(live, "metadata")["uid"] = "u1";
  }
  std::map<std::string, std::vector<std::string>> owners = Owners(live);
  EXPECT_EQ(owners.size(), 10u);
  ASSERT_TRUE(owners.contains("Update ancient-changes"));
  EXPECT_FALSE(owners.contains("Update writer-0"));
  EXPECT_TRUE(owners.contains("Update writer-12"));
  // Nothing is lost: every key is still owned by someone.
  size_t owned = 0;
  for (const auto& [who, paths] : owners) {
    owned += std::count_if(paths.begin(), paths.end(),
                           [](const std::string& p) { return p.rfind(".data.k", 0) == 0; });
  }
  EXPECT_EQ(owned, 13u);
}

// A writer that changes only fields it owns (a kubelet renewing its node's
// Lease) keeps its entry's fields and moves its time; the entry reads as a
// full decode and encode would write it, and the other entries stay.
// Changing a field it does not own yet, or another's, moves ownership.
TEST(ServerSideApply, AnUpdateOfOwnFieldsMovesOnlyTheTime) {
  const json::object& definitions = SchemaSet::Builtin().Definitions();
  const json::object* root = SchemaSet::Builtin().Definition("io.k8s.api.coordination.v1.Lease");
  ASSERT_NE(root, nullptr);
  FieldManager manager(Typed(&definitions, root));
  auto lease = [](const std::string& renew, const std::string& label, int duration) {
    return json::parse(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
        "metadata":{"name":"n1","namespace":"kube-node-lease","uid":"u1","labels":{"l":")" +
                       label + R"("}},
        "spec":{"holderIdentity":"n1","leaseDurationSeconds":)" +
                       std::to_string(duration) + R"(,"renewTime":")" + renew + R"("}})")
        .as_object();
  };
  auto write = [&](const json::object& live, const json::object& next, const std::string& who,
                   const std::string& now) {
    FieldManagerRequest req{.manager = who, .api_version = "coordination.k8s.io/v1", .now = now};
    json::object out = manager.Update(live, next, req);
    EnsureObject(out, "metadata")["uid"] = "u1";
    return out;
  };
  json::object live = write({}, lease("t0", "a", 40), "kubelet", "2026-01-01T00:00:00Z");
  live = write(live, lease("t0", "b", 40), "labeller", "2026-01-01T00:00:01Z");
  json::object renewed = write(live, lease("t1", "b", 40), "kubelet", "2026-01-01T00:00:02Z");
  EXPECT_EQ(Owners(renewed), Owners(live));
  const json::array& entries = Find(renewed, "metadata.managedFields")->as_array();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(StringAt(entries[0].as_object(), "manager"), "labeller");
  EXPECT_EQ(StringAt(entries[1].as_object(), "manager"), "kubelet");
  EXPECT_EQ(StringAt(entries[1].as_object(), "time"), "2026-01-01T00:00:02Z");
  auto decoded = DecodeManagedFields(entries);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(json::serialize(entries), json::serialize(EncodeManagedFields(*decoded)));

  // A field the kubelet did not own: it takes the label from the labeller,
  // who owned nothing else and leaves.
  json::object took = write(renewed, lease("t1", "c", 40), "kubelet", "2026-01-01T00:00:03Z");
  EXPECT_EQ(Owners(took), (std::map<std::string, std::vector<std::string>>{
                              {"Update kubelet",
                               {".metadata.labels", ".metadata.labels.l", ".spec.holderIdentity",
                                ".spec.leaseDurationSeconds", ".spec.renewTime"}}}));
}

}  // namespace
}  // namespace flotilla::api
