// Pod specs as they appear in pods and in workload templates: the defaults
// kube-apiserver applies (pkg/apis/core/v1/defaults.go) and the part of
// ValidatePodSpec that Flotilla enforces. Internal to src/api/kinds.
#pragma once

#include <string>

#include "api/kinds/util.h"
#include "base/json.h"

namespace flotilla::api::kinds {

// SetDefaults_PodSpec and everything under it: restartPolicy Always,
// terminationGracePeriodSeconds 30, dnsPolicy ClusterFirst, schedulerName
// default-scheduler, securityContext {}; per container
// terminationMessagePath/Policy, imagePullPolicy (Always for a missing or
// "latest" tag, else IfNotPresent), resources {}, port protocol TCP, probe
// timings, HTTP probe path and scheme, env fieldRef apiVersion; volume
// defaultMode 420 and an emptyDir for a volume without a source.
void DefaultPodSpec(json::object& spec);
// The Pod-only defaults (SetDefaults_Pod): requests copied from limits and
// enableServiceLinks true. Call after DefaultPodSpec.
void DefaultPodOnlySpec(json::object& spec);
// DefaultPodSpec on template.spec, when present.
void DefaultPodTemplate(json::object& template_spec);

// ValidatePodSpec's rules for containers (required; names DNS-1123 labels,
// unique across init and app containers; image required; ports in range,
// protocols, port names), volumes (names unique DNS-1123 labels), volume
// mounts naming a volume, restartPolicy, dnsPolicy and imagePullPolicy.
// `path` is the spec's field path ("spec.template.spec").
void ValidatePodSpec(const json::object& spec, const std::string& path, Causes& out);

// ValidatePodTemplateSpec: template labels (reported at `path`.labels, as
// Kubernetes does), then ValidatePodSpec on template.spec. A missing template
// reads as an empty one, as Go's zero-valued struct does.
void ValidatePodTemplate(const json::object& template_spec, const std::string& path, Causes& out);

}  // namespace flotilla::api::kinds
