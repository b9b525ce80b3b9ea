// `flotilla interpret`: runs a ResourceInterpreterCustomization's Lua
// scripts offline, as `karmadactl interpret` does (docs/interpreter.md):
//   flotilla interpret -f CUSTOMIZATION.yaml --check
//   flotilla interpret -f CUSTOMIZATION.yaml --operation OP
//       [--desired-file OBJ.yaml] [--observed-file OBJ.yaml]
//       [--status-file ITEMS.yaml] [--desired-replica N]
// The file may hold several customizations (YAML documents, or a List),
// and other objects, which are skipped (a CRD beside its customization);
// the customization whose target is the object's apiVersion and kind runs. Results
// print as YAML documents, "# [1/2] replica:" before each; errors go to
// stderr with exit code 1.
#include <yaml-cpp/yaml.h>

#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "base/file.h"
#include "base/io.h"
#include "base/yaml.h"
#include "cli/commands.h"
#include "interpreter/interpreter.h"

namespace flotilla::cli {
namespace {

struct InterpretFlags {
  std::string file, operation, desired_file, observed_file, status_file;
  int64_t desired_replica = 0;
  bool check = false;
};

// Every document of a YAML file, a List's items spread out.
StatusOr<std::vector<json::value>> ReadYamlDocuments(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    FLOTILLA_ASSIGN_OR_RETURN(text, ReadFile(path));
  }
  std::vector<json::value> out;
  std::vector<YAML::Node> nodes;
  try {
    nodes = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return Status::BadRequest(path + ": " + e.what());
  }
  for (const YAML::Node& node : nodes) {
    if (node.IsNull()) continue;
    YAML::Emitter emitter;
    emitter << node;
    FLOTILLA_ASSIGN_OR_RETURN(json::value doc, ParseYaml(emitter.c_str()));
    const json::value* items = doc.is_object() ? doc.get_object().if_contains("items") : nullptr;
    if (doc.is_object() && StringAt(doc.get_object(), "kind").ends_with("List") &&
        items != nullptr && items->is_array()) {
      for (const json::value& item : items->get_array()) out.push_back(item);
    } else {
      out.push_back(std::move(doc));
    }
  }
  return out;
}

StatusOr<std::optional<json::object>> ReadOneObject(const std::string& path) {
  if (path.empty()) return std::optional<json::object>();
  FLOTILLA_ASSIGN_OR_RETURN(std::vector<json::value> docs, ReadYamlDocuments(path));
  if (docs.size() != 1 || !docs.front().is_object()) {
    return Status::BadRequest(path + ": must hold exactly one object");
  }
  return std::optional<json::object>(docs.front().get_object());
}

void EmitInterpretYaml(YAML::Emitter& out, const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      out << YAML::Null;
      return;
    case json::kind::bool_:
      out << v.get_bool();
      return;
    case json::kind::int64:
      out << v.get_int64();
      return;
    case json::kind::uint64:
      out << v.get_uint64();
      return;
    case json::kind::double_:
      out << v.get_double();
      return;
    case json::kind::string: {
      std::string s(v.get_string());
      // Quoted when YAML would read it as something else than a string.
      StatusOr<json::value> plain = ParseYaml(s);
      if (!plain.ok() || !plain->is_string() || plain->get_string() != s) {
        out << YAML::DoubleQuoted;
      }
      out << s;
      return;
    }
    case json::kind::array:
      if (v.get_array().empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const json::value& e : v.get_array()) EmitInterpretYaml(out, e);
      out << YAML::EndSeq;
      return;
    case json::kind::object:
      if (v.get_object().empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, value] : v.get_object()) {
        out << YAML::Key << std::string(key) << YAML::Value;
        EmitInterpretYaml(out, value);
      }
      out << YAML::EndMap;
      return;
  }
}

int InterpretFailed(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

int RunInterpret(const InterpretFlags& f) {
  auto docs = ReadYamlDocuments(f.file);
  if (!docs.ok()) return InterpretFailed(std::string(docs.status().message()));
  std::vector<interpreter::Customization> customizations;
  bool invalid = false;
  int found = 0;
  for (const json::value& doc : *docs) {
    // Other documents (the CRD beside its customization) are skipped.
    if (!doc.is_object() ||
        StringAt(doc.get_object(), "kind") != "ResourceInterpreterCustomization") {
      continue;
    }
    ++found;
    const json::object& obj = doc.get_object();
    if (f.check) {
      std::string name = StringAt(obj, "metadata.name");
      std::vector<StatusCause> causes = interpreter::Validate(obj);
      std::cout << "-----------------------------------\n"
                << "SOURCE: " << name << "\n"
                << "TARGET: " << StringAt(obj, "spec.target.apiVersion") << " "
                << StringAt(obj, "spec.target.kind") << "\n";
      for (interpreter::Operation op : interpreter::kOperations) {
        const json::value* script =
            Find(obj, "spec.customizations." + std::string(interpreter::CustomizationField(op)) +
                          ".luaScript");
        std::string verdict = script == nullptr ? "UNSET" : "PASS";
        for (const StatusCause& c : causes) {
          if (c.field.find(interpreter::CustomizationField(op)) != std::string::npos) {
            verdict = "ERROR: " + c.message;
          }
        }
        std::cout << "RULE " << interpreter::OperationName(op) << ": " << verdict << "\n";
      }
      for (const StatusCause& c : causes) {
        if (c.field.starts_with("spec.target"))
          std::cout << "ERROR: " << c.field << ": " << c.message << "\n";
      }
      invalid = invalid || !causes.empty();
      continue;
    }
    auto c = interpreter::Read(obj);
    if (!c.ok()) return InterpretFailed(std::string(c.status().message()));
    customizations.push_back(*std::move(c));
  }
  if (found == 0) return InterpretFailed(f.file + ": holds no ResourceInterpreterCustomization");
  if (f.check) return invalid ? 1 : 0;

  if (f.operation.empty()) return InterpretFailed("--operation or --check is required");
  std::optional<interpreter::Operation> op = interpreter::ParseOperation(f.operation);
  if (!op.has_value()) {
    std::string names;
    for (interpreter::Operation o : interpreter::kOperations) {
      names += (names.empty() ? "" : ", ") + std::string(interpreter::OperationName(o));
    }
    return InterpretFailed("operation " + f.operation + " is not supported. Use one of: " + names);
  }
  interpreter::Inputs in;
  auto desired = ReadOneObject(f.desired_file);
  if (!desired.ok()) return InterpretFailed(std::string(desired.status().message()));
  auto observed = ReadOneObject(f.observed_file);
  if (!observed.ok()) return InterpretFailed(std::string(observed.status().message()));
  in.desired = *desired;
  in.observed = *observed;
  in.desired_replica = f.desired_replica;
  if (!f.status_file.empty()) {
    auto items = ReadYamlDocuments(f.status_file);
    if (!items.ok()) return InterpretFailed(std::string(items.status().message()));
    for (json::value& item : *items) {
      if (item.is_array()) {
        for (const json::value& i : item.get_array()) in.status_items.push_back(i);
      } else {
        in.status_items.push_back(std::move(item));
      }
    }
  }
  // The customization of the object's kind; the only one when the object
  // does not say.
  const json::object* object = in.observed ? &*in.observed : in.desired ? &*in.desired : nullptr;
  const interpreter::Customization* chosen = nullptr;
  for (const auto& c : customizations) {
    if (object == nullptr ||
        (StringAt(*object, "apiVersion") == c.api_version && StringAt(*object, "kind") == c.kind)) {
      chosen = &c;
      break;
    }
  }
  if (chosen == nullptr) {
    return InterpretFailed("no customization in " + f.file +
                           " targets the object's apiVersion and kind");
  }
  auto results = interpreter::Execute(*chosen, *op, in);
  if (!results.ok()) {
    std::cerr << "Execute " << interpreter::OperationName(*op)
              << " error: " << results.status().message() << "\n";
    return 1;
  }
  for (size_t i = 0; i < results->size(); ++i) {
    const auto& [name, value] = (*results)[i];
    YAML::Emitter out;
    EmitInterpretYaml(out, value);
    std::cout << "---\n# [" << i + 1 << "/" << results->size() << "] " << name << ":\n"
              << out.c_str() << "\n";
  }
  return 0;
}

}  // namespace

void AddInterpretCommand(CLI::App& app) {
  auto f = std::make_shared<InterpretFlags>();
  auto* cmd = app.add_subcommand(
      "interpret",
      "Run a ResourceInterpreterCustomization's Lua scripts offline, as karmadactl interpret does");
  cmd->add_option("-f,--filename", f->file,
                  "The customization(s): a YAML or JSON file, - for stdin")
      ->required();
  cmd->add_flag("--check", f->check, "Validate the customizations' scripts");
  cmd->add_option("--operation", f->operation,
                  "InterpretReplica, ReviseReplica, Retain, AggregateStatus, InterpretStatus, "
                  "InterpretHealth or InterpretDependency (either case of the first letter)");
  cmd->add_option("--desired-file", f->desired_file, "The object as the federation has it");
  cmd->add_option("--observed-file", f->observed_file, "The object as a member has it");
  cmd->add_option(
      "--status-file", f->status_file,
      "AggregatedStatusItems ({clusterName, status, applied, health}), for AggregateStatus");
  cmd->add_option("--desired-replica", f->desired_replica, "The replicas, for ReviseReplica");
  cmd->callback([f] { ExitProcess(RunInterpret(*f)); });
}

}  // namespace flotilla::cli
