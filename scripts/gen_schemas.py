#!/usr/bin/python3
"""Generates Flotilla's OpenAPI definitions from Debian's python3-kubernetes.

The official Python client (Kubernetes API 1.22) carries, per model class,
`openapi_types` (attribute -> type string), `attribute_map` (attribute -> JSON
name), property docstrings with the field descriptions, and setters that
reject None for required fields. This script turns the models that Flotilla's
kinds need into OpenAPI v2-style definitions under their real Kubernetes names
(io.k8s.api.apps.v1.Deployment, ...), completes them with what the models lack
(int32/int64, Quantity, IntOrString, MicroTime, strategic-merge extensions,
type descriptions, fields added after 1.22) from src/api/schemas/curation.json,
adds the hand-written definitions of src/api/schemas/handwritten.json,
policy.json and config.json, and checks that every $ref resolves.

Outputs: the definitions as one JSON object (name -> schema), and optionally a
C++ source that embeds that JSON (see src/api/schemas/embedded.h).

Usage: gen_schemas.py --schemas-dir src/api/schemas --json out.json [--cc out.cc]
"""

import argparse
import glob
import inspect
import json
import os
import re
import sys

import kubernetes.client.models as models

API_DIR = os.path.join(os.path.dirname(models.__file__), "..", "api")
REF_PREFIX = "#/definitions/"
META_PREFIX = "io.k8s.apimachinery.pkg.apis.meta.v1."
CLASS_RE = re.compile(r"^(Core|Discovery|Events|Storage|Authentication|Admissionregistration"
                      r"|Apiextensions|Apiregistration)?(V\d+(?:(?:alpha|beta)\d+)?)([A-Z]\w*)$")
CALL_RE = re.compile(r"call_api\(\s*'(/[^']*)',\s*'(\w+)'")
RESPONSE_RE = re.compile(r"response_type='(\w+)'")
CORE_PATH_RE = re.compile(r"^/api/(v1)(?:/namespaces/\{namespace\})?/([a-z]+)(?:/\{name\})?$")
GROUP_PATH_RE = re.compile(
    r"^/apis/([a-z0-9.-]+)/(v\w+)(?:/namespaces/\{namespace\})?/([a-z]+)(?:/\{name\})?$")
LIST_RE = re.compile(r"^list\[(.+)\]$")
DICT_RE = re.compile(r"^dict\(str, (.+)\)$")


class GenError(Exception):
    pass


def split_class(name):
    """'CoreV1EndpointPort' -> ('v1', 'EndpointPort')."""
    m = CLASS_RE.match(name)
    if not m:
        raise GenError("cannot parse model class name %s" % name)
    return m.group(2).lower(), m.group(3)


def model_refs(type_string):
    return [t for t in re.findall(r"[A-Z]\w+", type_string) if hasattr(models, t)]


def api_groups():
    """Model class -> set of API groups whose plain resource paths return it.

    Reads the generated API modules: each method calls call_api(path, verb,
    ..., response_type='V1Deployment'). Subresources (scale, eviction, ...)
    are skipped, so V1Scale is not attributed to apps.
    """
    found = {}
    for path in sorted(glob.glob(os.path.join(API_DIR, "*_api.py"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for chunk in text.split("\n    def ")[1:]:
            call = CALL_RE.search(chunk)
            response = RESPONSE_RE.search(chunk)
            if not call or not response:
                continue
            url = call.group(1)
            core = CORE_PATH_RE.match(url)
            grouped = GROUP_PATH_RE.match(url)
            if core:
                group = ""
            elif grouped:
                group = grouped.group(1)
            else:
                continue
            found.setdefault(response.group(1), set()).add(group)
    return found


class PackageResolver:
    """Finds the Go package (API group) of each model class.

    Order: the curated table (meta/v1 types, V1Scale, ...); the group whose
    API returns the class; for nested types, core if a core kind contains
    them, else the single group whose kinds contain them.
    """

    def __init__(self, curation):
        self.fixed = dict(curation["packages"]["fixed"])
        for name in curation["packages"]["meta"]:
            self.fixed[name] = "meta"
        self.returned = {c: g for c, g in api_groups().items() if len(g) == 1}
        self.closures = {}

    def closure(self, cls_name):
        if cls_name not in self.closures:
            seen, stack = set(), [cls_name]
            while stack:
                c = stack.pop()
                if c in seen:
                    continue
                seen.add(c)
                stack.extend(r for t in getattr(models, c).openapi_types.values()
                             for r in model_refs(t))
            self.closures[cls_name] = seen
        return self.closures[cls_name]

    def group(self, cls_name):
        if cls_name in self.fixed:
            return self.fixed[cls_name]
        if cls_name in self.returned:
            return next(iter(self.returned[cls_name]))
        owners = {g for kind, gs in self.returned.items() for g in gs
                  if cls_name in self.closure(kind)}
        if "" in owners:
            return ""
        if len(owners) == 1:
            return owners.pop()
        raise GenError("cannot tell the API group of %s (candidates %s): add it to "
                       "curation.json packages" % (cls_name, sorted(owners)))


def kind_suffixes(kind):
    """The kind's model and its list's: a kind with "list": false (a review,
    a token request: created, never stored or listed) has no list."""
    return ("", "List") if kind.get("list", True) else ("",)


class Generator:
    def __init__(self, curation, handwritten):
        self.cur = curation
        self.handwritten = handwritten
        self.packages = PackageResolver(curation)
        self.names = {}
        self.definitions = {}
        self.kind_of = {}  # definition name -> (group, version, kind)
        for k in curation["kinds"]:
            for suffix in kind_suffixes(k):
                self.kind_of[self.def_name(k["model"] + suffix)] = (
                    k["group"], k["version"], k["kind"] + suffix)

    def def_name(self, cls_name):
        if cls_name in self.names:
            return self.names[cls_name]
        version, type_name = split_class(cls_name)
        type_name = self.cur["renames"].get(cls_name, type_name)
        group = self.packages.group(cls_name)
        version = self.cur["version_renames"].get("%s/%s" % (group, version), version)
        if group == "meta":
            name = META_PREFIX + type_name
        else:
            short = group.split(".")[0] if group else "core"
            name = "io.k8s.api.%s.%s.%s" % (short, version, type_name)
        self.names[cls_name] = name
        return name

    # ---- one property -------------------------------------------------

    def lookup(self, table, def_name, field):
        """A curation table entry for a field.

        Keys, most specific first: 'GoType.field'; '<kind>.field' for the
        top-level kinds and '<list>.field' for their lists; '*.field'.
        """
        type_name = def_name.rsplit(".", 1)[1]
        keys = ["%s.%s" % (type_name, field)]
        if def_name in self.kind_of:
            role = "<list>" if self.kind_of[def_name][2].endswith("List") else "<kind>"
            keys.append("%s.%s" % (role, field))
        keys.append("*." + field)
        for key in keys:
            if key in table:
                return table[key]
        return None

    def scalar(self, def_name, field, type_string):
        key = "%s.%s" % (def_name.rsplit(".", 1)[1], field)
        special = self.cur["field_types"].get(key)
        if special:
            return {"$ref": REF_PREFIX + special}
        if type_string == "str" and key in self.cur["byte_fields"]:
            return {"type": "string", "format": "byte"}
        if type_string == "str":
            return {"type": "string"}
        if type_string == "bool":
            return {"type": "boolean"}
        if type_string == "float":
            return {"type": "number", "format": "double"}
        if type_string == "int":
            wide = field in self.cur["int64_fields"] or key in self.cur["int64_fields"]
            return {"type": "integer", "format": "int64" if wide else "int32"}
        if type_string == "datetime":
            return {"$ref": REF_PREFIX + META_PREFIX + "Time"}
        if hasattr(models, type_string):
            return {"$ref": REF_PREFIX + self.def_name(type_string)}
        raise GenError("no schema for %s of type %s: add it to curation.json field_types"
                       % (key, type_string))

    def prop(self, def_name, field, type_string):
        m = LIST_RE.match(type_string)
        if m:
            return {"type": "array", "items": self.scalar(def_name, field, m.group(1))}
        m = DICT_RE.match(type_string)
        if m:
            # dict(str, list[str]): a map of string lists (UserInfo.extra).
            return {"type": "object",
                    "additionalProperties": self.prop(def_name, field, m.group(1))}
        return self.scalar(def_name, field, type_string)

    # ---- one model ----------------------------------------------------

    def model(self, cls_name):
        cls = getattr(models, cls_name)
        name = self.def_name(cls_name)
        type_name = name.rsplit(".", 1)[1]
        props, required = {}, []
        for attr, type_string in cls.openapi_types.items():
            field = cls.attribute_map[attr]
            if "%s.%s" % (type_name, field) in self.cur["removed_fields"]:
                continue
            schema = self.prop(name, field, type_string)
            description = property_description(cls, attr) or self.field_description(name, field)
            if description:
                schema["description"] = description
            schema.update(self.extensions(name, field, type_string))
            props[field] = schema
            if is_required(cls, attr):
                required.append(field)
        props.update(self.cur["added_fields"].get(name, {}))
        definition = {"type": "object", "properties": dict(sorted(props.items()))}
        description = self.type_description(name)
        if description:
            definition["description"] = description
        if required:
            definition["required"] = required
        gvks = self.gvks(name)
        if gvks:
            definition["x-kubernetes-group-version-kind"] = gvks
        return definition

    def type_description(self, name):
        text = self.cur["type_descriptions"].get(name)
        if text is None and name in self.kind_of and name.endswith("List"):
            kind = self.kind_of[name][2]
            text = "%s is a list of %s objects." % (kind, kind[:-len("List")])
        return text

    def field_description(self, def_name, field):
        text = self.lookup(self.cur["field_descriptions"], def_name, field)
        if text is None or def_name not in self.kind_of:
            return text
        return text.replace("{kind}", self.kind_of[def_name][2])

    def extensions(self, def_name, field, type_string):
        ext = dict(self.lookup(self.cur["patch"], def_name, field) or {})
        item = LIST_RE.match(type_string)
        if not ext and field == "conditions" and item and hasattr(models, item.group(1)):
            if "type" in getattr(models, item.group(1)).attribute_map.values():
                ext = {"x-kubernetes-patch-merge-key": "type",
                       "x-kubernetes-patch-strategy": "merge"}
        return ext

    def gvks(self, name):
        if name in self.kind_of:
            group, version, kind = self.kind_of[name]
            return [{"group": group, "kind": kind, "version": version}]
        kind = name.rsplit(".", 1)[1]
        if kind in self.cur["every_group_version"]:
            return [{"group": k["group"], "kind": kind, "version": k["version"]}
                    for k in self.group_versions()]
        return self.cur["fixed_gvks"].get(name)

    def group_versions(self):
        seen = []
        for k in self.cur["kinds"] + self.cur["extra_group_versions"]:
            gv = {"group": k["group"], "version": k["version"]}
            if gv not in seen:
                seen.append(gv)
        return seen

    # ---- the whole set ------------------------------------------------

    def run(self):
        pending = [k["model"] + s for k in self.cur["kinds"] for s in kind_suffixes(k)]
        pending += self.cur["extra_models"]
        done = set()
        while pending:
            cls_name = pending.pop()
            if cls_name in done:
                continue
            done.add(cls_name)
            self.definitions[self.def_name(cls_name)] = self.model(cls_name)
            for type_string in getattr(models, cls_name).openapi_types.values():
                pending.extend(model_refs(type_string))
        for name, definition in self.handwritten.items():
            if name in self.definitions:
                raise GenError("%s is both generated and hand-written" % name)
            self.definitions[name] = definition
        check_refs(self.definitions)
        return dict(sorted(self.definitions.items()))


def property_description(cls, attr):
    """The description paragraph of a model property's getter docstring."""
    doc = getattr(cls, attr).fget.__doc__ or ""
    lines = [line.replace("# noqa: E501", "").strip() for line in doc.split("\n")[1:]]
    body = []
    for line in lines:
        if line.startswith(":return"):
            break
        body.append(line)
    return "\n".join(body).strip()


def is_required(cls, attr):
    """Required fields are those whose setter rejects None."""
    source = inspect.getsource(getattr(cls, attr).fset)
    return "must not be `None`" in source


def walk_refs(value):
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            else:
                yield from walk_refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from walk_refs(v)


def check_refs(definitions):
    for name, definition in definitions.items():
        for ref in walk_refs(definition):
            if not ref.startswith(REF_PREFIX) or ref[len(REF_PREFIX):] not in definitions:
                raise GenError("%s refers to missing %s" % (name, ref))


def write_cc(path, text):
    """A C++ source defining the parts of the JSON text as raw string literals.

    The text is cut into parts of at most 60000 bytes so that no literal
    exceeds what every compiler accepts; the reader concatenates them.
    """
    delimiter = "flotilla_schema"
    if ")" + delimiter + '"' in text:
        raise GenError("the schema text contains the raw string delimiter")
    parts = [text[i:i + 60000] for i in range(0, len(text), 60000)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("// Generated by scripts/gen_schemas.py. Do not edit.\n")
        f.write('#include "api/schemas/embedded.h"\n\n')
        f.write("namespace flotilla::api::schemas {\n\n")
        f.write("const char* const kEmbeddedDefinitionParts[] = {\n")
        for part in parts:
            f.write('    R"%s(%s)%s",\n' % (delimiter, part, delimiter))
        f.write("};\n")
        f.write("const size_t kEmbeddedDefinitionPartCount = %d;\n\n" % len(parts))
        f.write("}  // namespace flotilla::api::schemas\n")


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# The hand-written definitions: apimachinery primitives and our own kinds,
# and the policy.karmada.io kinds (docs/policies.md).
HANDWRITTEN_FILES = ("handwritten.json", "policy.json", "config.json")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--schemas-dir", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--cc")
    args = parser.parse_args()
    curation = load_json(os.path.join(args.schemas_dir, "curation.json"))
    handwritten = {}
    for name in HANDWRITTEN_FILES:
        for key, definition in load_json(os.path.join(args.schemas_dir, name)).items():
            if key in handwritten:
                print("gen_schemas: %s is written twice" % key, file=sys.stderr)
                return 1
            handwritten[key] = definition
    try:
        definitions = Generator(curation, handwritten).run()
    except GenError as e:
        print("gen_schemas: %s" % e, file=sys.stderr)
        return 1
    text = json.dumps(definitions, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    write_json(args.json, text)
    if args.cc:
        write_cc(args.cc, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
