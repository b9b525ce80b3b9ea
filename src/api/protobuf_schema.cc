// Field numbers of the k8s.io/api (core/v1, apps/v1, autoscaling/v1 and v2,
// rbac/v1, authentication/v1 TokenRequest, authorization/v1 reviews)
// and k8s.io/apimachinery (meta/v1) generated.proto messages that the kinds
// we serve contain. One table, longer than our usual file, because it is data
// that reads best in one place: a message per block, fields in proto order.
//
// kPointer (P) marks fields whose Go type is a pointer, or whose JSON tag
// has no omitempty, so that a zero sent on the wire stays in JSON.
#include "api/protobuf_schema.h"

namespace flotilla::api::protobuf {
namespace {

constexpr uint8_t P = kPointer;

constexpr Field Str(uint32_t n, std::string_view j, uint8_t f = 0) {
  return {n, j, Type::kString, f};
}
constexpr Field Strs(uint32_t n, std::string_view j) { return {n, j, Type::kString, kRepeated}; }
constexpr Field I32(uint32_t n, std::string_view j, uint8_t f = 0) {
  return {n, j, Type::kInt32, f};
}
constexpr Field I64(uint32_t n, std::string_view j, uint8_t f = 0) {
  return {n, j, Type::kInt64, f};
}
constexpr Field I64s(uint32_t n, std::string_view j) { return {n, j, Type::kInt64, kRepeated}; }
constexpr Field Bool(uint32_t n, std::string_view j, uint8_t f = 0) {
  return {n, j, Type::kBool, f};
}
constexpr Field Msg(uint32_t n, std::string_view j, const Message* m) {
  return {n, j, Type::kMessage, 0, m};
}
constexpr Field Msgs(uint32_t n, std::string_view j, const Message* m) {
  return {n, j, Type::kMessage, kRepeated, m};
}
constexpr Field Inline(uint32_t n, const Message* m) { return {n, "", Type::kInline, 0, m}; }
constexpr Field Time(uint32_t n, std::string_view j) { return {n, j, Type::kTime}; }
constexpr Field Qty(uint32_t n, std::string_view j, uint8_t f = 0) {
  return {n, j, Type::kQuantity, f};
}
constexpr Field IntStr(uint32_t n, std::string_view j, uint8_t f = 0) {
  return {n, j, Type::kIntOrString, f};
}
constexpr Field MapStr(uint32_t n, std::string_view j) { return {n, j, Type::kMapString}; }
constexpr Field MapBytes(uint32_t n, std::string_view j) { return {n, j, Type::kMapBytes}; }
constexpr Field MapQty(uint32_t n, std::string_view j) { return {n, j, Type::kMapQuantity}; }

}  // namespace

// Declared first so that tables can point at messages defined later.
extern const Message kObjectMeta, kManagedFieldsEntry, kOwnerReference, kLabelSelector,
    kLabelSelectorRequirement, kMetaCondition, kNamespace, kNamespaceSpec, kNamespaceStatus,
    kNamespaceCondition, kConfigMap, kSecret, kServiceAccount, kObjectReference,
    kLocalObjectReference, kBinding, kPod, kPodSpec, kPodStatus, kPodCondition, kPodIP,
    kPodTemplateSpec, kContainer, kContainerPort, kEnvVar, kEnvVarSource, kObjectFieldSelector,
    kResourceFieldSelector, kConfigMapKeySelector, kSecretKeySelector, kEnvFromSource,
    kConfigMapEnvSource, kSecretEnvSource, kResourceRequirements, kResourceClaim,
    kContainerResizePolicy, kVolumeMount, kVolumeDevice, kProbe, kProbeHandler, kExecAction,
    kHTTPGetAction, kHTTPHeader, kTCPSocketAction, kGRPCAction, kLifecycle, kLifecycleHandler,
    kSleepAction, kSecurityContext, kCapabilities, kSELinuxOptions, kWindowsOptions,
    kSeccompProfile, kAppArmorProfile, kPodSecurityContext, kSysctl, kVolume, kVolumeSource,
    kHostPathVolumeSource, kEmptyDirVolumeSource, kSecretVolumeSource, kKeyToPath, kPVCVolumeSource,
    kConfigMapVolumeSource, kDownwardAPIVolumeSource, kDownwardAPIVolumeFile,
    kProjectedVolumeSource, kVolumeProjection, kSecretProjection, kConfigMapProjection,
    kDownwardAPIProjection, kServiceAccountTokenProjection, kNFSVolumeSource, kCSIVolumeSource,
    kImageVolumeSource, kToleration, kAffinity, kNodeAffinity, kNodeSelector, kNodeSelectorTerm,
    kNodeSelectorRequirement, kPreferredSchedulingTerm, kPodAffinity, kPodAffinityTerm,
    kWeightedPodAffinityTerm, kTopologySpreadConstraint, kHostAlias, kPodDNSConfig,
    kPodDNSConfigOption, kPodReadinessGate, kPodOS, kPodSchedulingGate, kPodResourceClaim, kService,
    kServiceSpec, kServicePort, kSessionAffinityConfig, kClientIPConfig, kServiceStatus,
    kLoadBalancerStatus, kLoadBalancerIngress, kPortStatus, kDeployment, kDeploymentSpec,
    kDeploymentStrategy, kRollingUpdateDeployment, kDeploymentStatus, kDeploymentCondition,
    kReplicaSet, kReplicaSetSpec, kReplicaSetStatus, kReplicaSetCondition, kHPAv1, kHPASpecV1,
    kHPAStatusV1, kCrossVersionObjectReference, kHPAv2, kHPASpecV2, kHPAStatusV2, kMetricSpec,
    kObjectMetricSource, kPodsMetricSource, kResourceMetricSource, kContainerResourceMetricSource,
    kExternalMetricSource, kMetricIdentifier, kMetricTarget, kHPABehavior, kHPAScalingRules,
    kHPAScalingPolicy, kHPACondition, kPolicyRule, kAggregationRule, kRole, kClusterRole, kSubject,
    kRoleRef, kRoleBinding, kClusterRoleBinding, kTokenRequest, kTokenRequestSpec,
    kTokenRequestStatus, kBoundObjectReference, kResourceAttributes, kNonResourceAttributes,
    kSubjectAccessReviewStatus, kSelfSubjectAccessReview, kSelfSubjectAccessReviewSpec,
    kSubjectAccessReview, kSubjectAccessReviewSpec, kSelfSubjectRulesReview,
    kSelfSubjectRulesReviewSpec, kSubjectRulesReviewStatus, kResourceRule, kNonResourceRule,
    kSelfSubjectReview, kSelfSubjectReviewStatus, kUserInfo, kResourceQuota, kResourceQuotaSpec,
    kResourceQuotaStatus, kScopeSelector, kScopedResourceSelectorRequirement, kJob, kJobSpec,
    kJobStatus, kJobCondition, kUncountedTerminatedPods, kCronJob, kCronJobSpec, kCronJobStatus,
    kJobTemplateSpec, kDaemonSet, kDaemonSetSpec, kDaemonSetStatus, kDaemonSetCondition,
    kDaemonSetUpdateStrategy, kRollingUpdateDaemonSet;

#define FLOTILLA_PB_MESSAGE(var, name, ...)  \
  const Field var##Fields[] = {__VA_ARGS__}; \
  const Message var { name, var##Fields }

// meta/v1
FLOTILLA_PB_MESSAGE(kObjectMeta, "ObjectMeta", Str(1, "name"), Str(2, "generateName"),
                    Str(3, "namespace"), Str(4, "selfLink"), Str(5, "uid"),
                    Str(6, "resourceVersion"), I64(7, "generation"), Time(8, "creationTimestamp"),
                    Time(9, "deletionTimestamp"), I64(10, "deletionGracePeriodSeconds", P),
                    MapStr(11, "labels"), MapStr(12, "annotations"),
                    Msgs(13, "ownerReferences", &kOwnerReference), Strs(14, "finalizers"),
                    Msgs(17, "managedFields", &kManagedFieldsEntry));
FLOTILLA_PB_MESSAGE(kManagedFieldsEntry, "ManagedFieldsEntry", Str(1, "manager"),
                    Str(2, "operation"), Str(3, "apiVersion"), Time(4, "time"),
                    Str(6, "fieldsType"), Field{7, "fieldsV1", Type::kFieldsV1},
                    Str(8, "subresource"));
FLOTILLA_PB_MESSAGE(kOwnerReference, "OwnerReference", Str(1, "kind"), Str(3, "name"),
                    Str(4, "uid"), Str(5, "apiVersion"), Bool(6, "controller", P),
                    Bool(7, "blockOwnerDeletion", P));
FLOTILLA_PB_MESSAGE(kLabelSelector, "LabelSelector", MapStr(1, "matchLabels"),
                    Msgs(2, "matchExpressions", &kLabelSelectorRequirement));
FLOTILLA_PB_MESSAGE(kLabelSelectorRequirement, "LabelSelectorRequirement", Str(1, "key"),
                    Str(2, "operator"), Strs(3, "values"));
FLOTILLA_PB_MESSAGE(kMetaCondition, "Condition", Str(1, "type"), Str(2, "status"),
                    I64(3, "observedGeneration"), Time(4, "lastTransitionTime"), Str(5, "reason"),
                    Str(6, "message"));

// core/v1 objects other than Pod and Service
FLOTILLA_PB_MESSAGE(kNamespace, "Namespace", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kNamespaceSpec), Msg(3, "status", &kNamespaceStatus));
FLOTILLA_PB_MESSAGE(kNamespaceSpec, "NamespaceSpec", Strs(1, "finalizers"));
FLOTILLA_PB_MESSAGE(kNamespaceStatus, "NamespaceStatus", Str(1, "phase"),
                    Msgs(2, "conditions", &kNamespaceCondition));
FLOTILLA_PB_MESSAGE(kNamespaceCondition, "NamespaceCondition", Str(1, "type"), Str(2, "status"),
                    Time(4, "lastTransitionTime"), Str(5, "reason"), Str(6, "message"));
FLOTILLA_PB_MESSAGE(kConfigMap, "ConfigMap", Msg(1, "metadata", &kObjectMeta), MapStr(2, "data"),
                    MapBytes(3, "binaryData"), Bool(4, "immutable", P));
FLOTILLA_PB_MESSAGE(kResourceQuota, "ResourceQuota", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kResourceQuotaSpec), Msg(3, "status", &kResourceQuotaStatus));
FLOTILLA_PB_MESSAGE(kResourceQuotaSpec, "ResourceQuotaSpec", MapQty(1, "hard"), Strs(2, "scopes"),
                    Msg(3, "scopeSelector", &kScopeSelector));
FLOTILLA_PB_MESSAGE(kResourceQuotaStatus, "ResourceQuotaStatus", MapQty(1, "hard"),
                    MapQty(2, "used"));
FLOTILLA_PB_MESSAGE(kScopeSelector, "ScopeSelector",
                    Msgs(1, "matchExpressions", &kScopedResourceSelectorRequirement));
FLOTILLA_PB_MESSAGE(kScopedResourceSelectorRequirement, "ScopedResourceSelectorRequirement",
                    Str(1, "scopeName"), Str(2, "operator"), Strs(3, "values"));
FLOTILLA_PB_MESSAGE(kSecret, "Secret", Msg(1, "metadata", &kObjectMeta), MapBytes(2, "data"),
                    Str(3, "type"), MapStr(4, "stringData"), Bool(5, "immutable", P));
FLOTILLA_PB_MESSAGE(kServiceAccount, "ServiceAccount", Msg(1, "metadata", &kObjectMeta),
                    Msgs(2, "secrets", &kObjectReference),
                    Msgs(3, "imagePullSecrets", &kLocalObjectReference),
                    Bool(4, "automountServiceAccountToken", P));
FLOTILLA_PB_MESSAGE(kObjectReference, "ObjectReference", Str(1, "kind"), Str(2, "namespace"),
                    Str(3, "name"), Str(4, "uid"), Str(5, "apiVersion"), Str(6, "resourceVersion"),
                    Str(7, "fieldPath"));
FLOTILLA_PB_MESSAGE(kLocalObjectReference, "LocalObjectReference", Str(1, "name"));
FLOTILLA_PB_MESSAGE(kBinding, "Binding", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "target", &kObjectReference));

// core/v1 Pod
FLOTILLA_PB_MESSAGE(kPod, "Pod", Msg(1, "metadata", &kObjectMeta), Msg(2, "spec", &kPodSpec),
                    Msg(3, "status", &kPodStatus));
FLOTILLA_PB_MESSAGE(kPodTemplateSpec, "PodTemplateSpec", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kPodSpec));
FLOTILLA_PB_MESSAGE(kPodSpec, "PodSpec", Msgs(1, "volumes", &kVolume),
                    Msgs(2, "containers", &kContainer), Str(3, "restartPolicy"),
                    I64(4, "terminationGracePeriodSeconds", P), I64(5, "activeDeadlineSeconds", P),
                    Str(6, "dnsPolicy"), MapStr(7, "nodeSelector"), Str(8, "serviceAccountName"),
                    Str(9, "serviceAccount"), Str(10, "nodeName"), Bool(11, "hostNetwork"),
                    Bool(12, "hostPID"), Bool(13, "hostIPC"),
                    Msg(14, "securityContext", &kPodSecurityContext),
                    Msgs(15, "imagePullSecrets", &kLocalObjectReference), Str(16, "hostname"),
                    Str(17, "subdomain"), Msg(18, "affinity", &kAffinity), Str(19, "schedulerName"),
                    Msgs(20, "initContainers", &kContainer),
                    Bool(21, "automountServiceAccountToken", P),
                    Msgs(22, "tolerations", &kToleration), Msgs(23, "hostAliases", &kHostAlias),
                    Str(24, "priorityClassName"), I32(25, "priority", P),
                    Msg(26, "dnsConfig", &kPodDNSConfig), Bool(27, "shareProcessNamespace", P),
                    Msgs(28, "readinessGates", &kPodReadinessGate), Str(29, "runtimeClassName", P),
                    Bool(30, "enableServiceLinks", P), Str(31, "preemptionPolicy", P),
                    MapQty(32, "overhead"),
                    Msgs(33, "topologySpreadConstraints", &kTopologySpreadConstraint),
                    Bool(35, "setHostnameAsFQDN", P), Msg(36, "os", &kPodOS),
                    Bool(37, "hostUsers", P), Msgs(38, "schedulingGates", &kPodSchedulingGate),
                    Msgs(39, "resourceClaims", &kPodResourceClaim),
                    Msg(40, "resources", &kResourceRequirements), Str(41, "hostnameOverride", P));
FLOTILLA_PB_MESSAGE(kPodStatus, "PodStatus", Str(1, "phase"), Msgs(2, "conditions", &kPodCondition),
                    Str(3, "message"), Str(4, "reason"), Str(5, "hostIP"), Str(6, "podIP"),
                    Time(7, "startTime"), Str(9, "qosClass"), Str(11, "nominatedNodeName"),
                    Msgs(12, "podIPs", &kPodIP), Msgs(16, "hostIPs", &kPodIP),
                    I64(17, "observedGeneration"));
FLOTILLA_PB_MESSAGE(kPodCondition, "PodCondition", Str(1, "type"), Str(2, "status"),
                    Time(3, "lastProbeTime"), Time(4, "lastTransitionTime"), Str(5, "reason"),
                    Str(6, "message"), I64(7, "observedGeneration"));
// PodIP and HostIP share their layout {ip = 1}.
FLOTILLA_PB_MESSAGE(kPodIP, "PodIP", Str(1, "ip"));
FLOTILLA_PB_MESSAGE(kContainer, "Container", Str(1, "name"), Str(2, "image"), Strs(3, "command"),
                    Strs(4, "args"), Str(5, "workingDir"), Msgs(6, "ports", &kContainerPort),
                    Msgs(7, "env", &kEnvVar), Msg(8, "resources", &kResourceRequirements),
                    Msgs(9, "volumeMounts", &kVolumeMount), Msg(10, "livenessProbe", &kProbe),
                    Msg(11, "readinessProbe", &kProbe), Msg(12, "lifecycle", &kLifecycle),
                    Str(13, "terminationMessagePath"), Str(14, "imagePullPolicy"),
                    Msg(15, "securityContext", &kSecurityContext), Bool(16, "stdin"),
                    Bool(17, "stdinOnce"), Bool(18, "tty"), Msgs(19, "envFrom", &kEnvFromSource),
                    Str(20, "terminationMessagePolicy"), Msgs(21, "volumeDevices", &kVolumeDevice),
                    Msg(22, "startupProbe", &kProbe),
                    Msgs(23, "resizePolicy", &kContainerResizePolicy), Str(24, "restartPolicy", P));
FLOTILLA_PB_MESSAGE(kContainerPort, "ContainerPort", Str(1, "name"), I32(2, "hostPort"),
                    I32(3, "containerPort", P), Str(4, "protocol"), Str(5, "hostIP"));
FLOTILLA_PB_MESSAGE(kEnvVar, "EnvVar", Str(1, "name"), Str(2, "value"),
                    Msg(3, "valueFrom", &kEnvVarSource));
FLOTILLA_PB_MESSAGE(kEnvVarSource, "EnvVarSource", Msg(1, "fieldRef", &kObjectFieldSelector),
                    Msg(2, "resourceFieldRef", &kResourceFieldSelector),
                    Msg(3, "configMapKeyRef", &kConfigMapKeySelector),
                    Msg(4, "secretKeyRef", &kSecretKeySelector));
FLOTILLA_PB_MESSAGE(kObjectFieldSelector, "ObjectFieldSelector", Str(1, "apiVersion"),
                    Str(2, "fieldPath"));
FLOTILLA_PB_MESSAGE(kResourceFieldSelector, "ResourceFieldSelector", Str(1, "containerName"),
                    Str(2, "resource"), Qty(3, "divisor"));
FLOTILLA_PB_MESSAGE(kConfigMapKeySelector, "ConfigMapKeySelector",
                    Inline(1, &kLocalObjectReference), Str(2, "key"), Bool(3, "optional", P));
FLOTILLA_PB_MESSAGE(kSecretKeySelector, "SecretKeySelector", Inline(1, &kLocalObjectReference),
                    Str(2, "key"), Bool(3, "optional", P));
FLOTILLA_PB_MESSAGE(kEnvFromSource, "EnvFromSource", Str(1, "prefix"),
                    Msg(2, "configMapRef", &kConfigMapEnvSource),
                    Msg(3, "secretRef", &kSecretEnvSource));
FLOTILLA_PB_MESSAGE(kConfigMapEnvSource, "ConfigMapEnvSource", Inline(1, &kLocalObjectReference),
                    Bool(2, "optional", P));
FLOTILLA_PB_MESSAGE(kSecretEnvSource, "SecretEnvSource", Inline(1, &kLocalObjectReference),
                    Bool(2, "optional", P));
FLOTILLA_PB_MESSAGE(kResourceRequirements, "ResourceRequirements", MapQty(1, "limits"),
                    MapQty(2, "requests"), Msgs(3, "claims", &kResourceClaim));
FLOTILLA_PB_MESSAGE(kResourceClaim, "ResourceClaim", Str(1, "name"), Str(2, "request"));
FLOTILLA_PB_MESSAGE(kContainerResizePolicy, "ContainerResizePolicy", Str(1, "resourceName"),
                    Str(2, "restartPolicy"));
FLOTILLA_PB_MESSAGE(kVolumeMount, "VolumeMount", Str(1, "name"), Bool(2, "readOnly"),
                    Str(3, "mountPath"), Str(4, "subPath"), Str(5, "mountPropagation", P),
                    Str(6, "subPathExpr"), Str(7, "recursiveReadOnly", P));
FLOTILLA_PB_MESSAGE(kVolumeDevice, "VolumeDevice", Str(1, "name"), Str(2, "devicePath"));
FLOTILLA_PB_MESSAGE(kProbe, "Probe", Inline(1, &kProbeHandler), I32(2, "initialDelaySeconds"),
                    I32(3, "timeoutSeconds"), I32(4, "periodSeconds"), I32(5, "successThreshold"),
                    I32(6, "failureThreshold"), I64(7, "terminationGracePeriodSeconds", P));
FLOTILLA_PB_MESSAGE(kProbeHandler, "ProbeHandler", Msg(1, "exec", &kExecAction),
                    Msg(2, "httpGet", &kHTTPGetAction), Msg(3, "tcpSocket", &kTCPSocketAction),
                    Msg(4, "grpc", &kGRPCAction));
FLOTILLA_PB_MESSAGE(kExecAction, "ExecAction", Strs(1, "command"));
FLOTILLA_PB_MESSAGE(kHTTPGetAction, "HTTPGetAction", Str(1, "path"), IntStr(2, "port"),
                    Str(3, "host"), Str(4, "scheme"), Msgs(5, "httpHeaders", &kHTTPHeader));
FLOTILLA_PB_MESSAGE(kHTTPHeader, "HTTPHeader", Str(1, "name"), Str(2, "value"));
FLOTILLA_PB_MESSAGE(kTCPSocketAction, "TCPSocketAction", IntStr(1, "port"), Str(2, "host"));
FLOTILLA_PB_MESSAGE(kGRPCAction, "GRPCAction", I32(1, "port", P), Str(2, "service", P));
FLOTILLA_PB_MESSAGE(kLifecycle, "Lifecycle", Msg(1, "postStart", &kLifecycleHandler),
                    Msg(2, "preStop", &kLifecycleHandler), Str(3, "stopSignal", P));
FLOTILLA_PB_MESSAGE(kLifecycleHandler, "LifecycleHandler", Msg(1, "exec", &kExecAction),
                    Msg(2, "httpGet", &kHTTPGetAction), Msg(3, "tcpSocket", &kTCPSocketAction),
                    Msg(4, "sleep", &kSleepAction));
FLOTILLA_PB_MESSAGE(kSleepAction, "SleepAction", I64(1, "seconds", P));
FLOTILLA_PB_MESSAGE(kSecurityContext, "SecurityContext", Msg(1, "capabilities", &kCapabilities),
                    Bool(2, "privileged", P), Msg(3, "seLinuxOptions", &kSELinuxOptions),
                    I64(4, "runAsUser", P), Bool(5, "runAsNonRoot", P),
                    Bool(6, "readOnlyRootFilesystem", P), Bool(7, "allowPrivilegeEscalation", P),
                    I64(8, "runAsGroup", P), Str(9, "procMount", P),
                    Msg(10, "windowsOptions", &kWindowsOptions),
                    Msg(11, "seccompProfile", &kSeccompProfile),
                    Msg(12, "appArmorProfile", &kAppArmorProfile));
FLOTILLA_PB_MESSAGE(kCapabilities, "Capabilities", Strs(1, "add"), Strs(2, "drop"));
FLOTILLA_PB_MESSAGE(kSELinuxOptions, "SELinuxOptions", Str(1, "user"), Str(2, "role"),
                    Str(3, "type"), Str(4, "level"));
FLOTILLA_PB_MESSAGE(kWindowsOptions, "WindowsSecurityContextOptions",
                    Str(1, "gmsaCredentialSpecName", P), Str(2, "gmsaCredentialSpec", P),
                    Str(3, "runAsUserName", P), Bool(4, "hostProcess", P));
FLOTILLA_PB_MESSAGE(kSeccompProfile, "SeccompProfile", Str(1, "type"),
                    Str(2, "localhostProfile", P));
FLOTILLA_PB_MESSAGE(kAppArmorProfile, "AppArmorProfile", Str(1, "type"),
                    Str(2, "localhostProfile", P));
FLOTILLA_PB_MESSAGE(kPodSecurityContext, "PodSecurityContext",
                    Msg(1, "seLinuxOptions", &kSELinuxOptions), I64(2, "runAsUser", P),
                    Bool(3, "runAsNonRoot", P), I64s(4, "supplementalGroups"), I64(5, "fsGroup", P),
                    I64(6, "runAsGroup", P), Msgs(7, "sysctls", &kSysctl),
                    Msg(8, "windowsOptions", &kWindowsOptions), Str(9, "fsGroupChangePolicy", P),
                    Msg(10, "seccompProfile", &kSeccompProfile),
                    Msg(11, "appArmorProfile", &kAppArmorProfile),
                    Str(12, "supplementalGroupsPolicy", P), Str(13, "seLinuxChangePolicy", P));
FLOTILLA_PB_MESSAGE(kSysctl, "Sysctl", Str(1, "name"), Str(2, "value"));

// core/v1 volumes
FLOTILLA_PB_MESSAGE(kVolume, "Volume", Str(1, "name"), Inline(2, &kVolumeSource));
FLOTILLA_PB_MESSAGE(kVolumeSource, "VolumeSource", Msg(1, "hostPath", &kHostPathVolumeSource),
                    Msg(2, "emptyDir", &kEmptyDirVolumeSource),
                    Msg(6, "secret", &kSecretVolumeSource), Msg(7, "nfs", &kNFSVolumeSource),
                    Msg(10, "persistentVolumeClaim", &kPVCVolumeSource),
                    Msg(16, "downwardAPI", &kDownwardAPIVolumeSource),
                    Msg(19, "configMap", &kConfigMapVolumeSource),
                    Msg(26, "projected", &kProjectedVolumeSource),
                    Msg(28, "csi", &kCSIVolumeSource), Msg(30, "image", &kImageVolumeSource));
FLOTILLA_PB_MESSAGE(kHostPathVolumeSource, "HostPathVolumeSource", Str(1, "path"),
                    Str(2, "type", P));
FLOTILLA_PB_MESSAGE(kEmptyDirVolumeSource, "EmptyDirVolumeSource", Str(1, "medium"),
                    Qty(2, "sizeLimit", P));
FLOTILLA_PB_MESSAGE(kSecretVolumeSource, "SecretVolumeSource", Str(1, "secretName"),
                    Msgs(2, "items", &kKeyToPath), I32(3, "defaultMode", P),
                    Bool(4, "optional", P));
FLOTILLA_PB_MESSAGE(kKeyToPath, "KeyToPath", Str(1, "key"), Str(2, "path"), I32(3, "mode", P));
FLOTILLA_PB_MESSAGE(kPVCVolumeSource, "PersistentVolumeClaimVolumeSource", Str(1, "claimName"),
                    Bool(2, "readOnly"));
FLOTILLA_PB_MESSAGE(kConfigMapVolumeSource, "ConfigMapVolumeSource",
                    Inline(1, &kLocalObjectReference), Msgs(2, "items", &kKeyToPath),
                    I32(3, "defaultMode", P), Bool(4, "optional", P));
FLOTILLA_PB_MESSAGE(kDownwardAPIVolumeSource, "DownwardAPIVolumeSource",
                    Msgs(1, "items", &kDownwardAPIVolumeFile), I32(2, "defaultMode", P));
FLOTILLA_PB_MESSAGE(kDownwardAPIVolumeFile, "DownwardAPIVolumeFile", Str(1, "path"),
                    Msg(2, "fieldRef", &kObjectFieldSelector),
                    Msg(3, "resourceFieldRef", &kResourceFieldSelector), I32(4, "mode", P));
FLOTILLA_PB_MESSAGE(kProjectedVolumeSource, "ProjectedVolumeSource",
                    Msgs(1, "sources", &kVolumeProjection), I32(2, "defaultMode", P));
FLOTILLA_PB_MESSAGE(kVolumeProjection, "VolumeProjection", Msg(1, "secret", &kSecretProjection),
                    Msg(2, "downwardAPI", &kDownwardAPIProjection),
                    Msg(3, "configMap", &kConfigMapProjection),
                    Msg(4, "serviceAccountToken", &kServiceAccountTokenProjection));
FLOTILLA_PB_MESSAGE(kSecretProjection, "SecretProjection", Inline(1, &kLocalObjectReference),
                    Msgs(2, "items", &kKeyToPath), Bool(4, "optional", P));
FLOTILLA_PB_MESSAGE(kConfigMapProjection, "ConfigMapProjection", Inline(1, &kLocalObjectReference),
                    Msgs(2, "items", &kKeyToPath), Bool(4, "optional", P));
FLOTILLA_PB_MESSAGE(kDownwardAPIProjection, "DownwardAPIProjection",
                    Msgs(1, "items", &kDownwardAPIVolumeFile));
FLOTILLA_PB_MESSAGE(kServiceAccountTokenProjection, "ServiceAccountTokenProjection",
                    Str(1, "audience"), I64(2, "expirationSeconds", P), Str(3, "path"));
FLOTILLA_PB_MESSAGE(kNFSVolumeSource, "NFSVolumeSource", Str(1, "server"), Str(2, "path"),
                    Bool(3, "readOnly"));
FLOTILLA_PB_MESSAGE(kCSIVolumeSource, "CSIVolumeSource", Str(1, "driver"), Bool(2, "readOnly", P),
                    Str(3, "fsType", P), MapStr(4, "volumeAttributes"),
                    Msg(5, "nodePublishSecretRef", &kLocalObjectReference));
FLOTILLA_PB_MESSAGE(kImageVolumeSource, "ImageVolumeSource", Str(1, "reference"),
                    Str(2, "pullPolicy"));

// core/v1 scheduling
FLOTILLA_PB_MESSAGE(kToleration, "Toleration", Str(1, "key"), Str(2, "operator"), Str(3, "value"),
                    Str(4, "effect"), I64(5, "tolerationSeconds", P));
FLOTILLA_PB_MESSAGE(kAffinity, "Affinity", Msg(1, "nodeAffinity", &kNodeAffinity),
                    Msg(2, "podAffinity", &kPodAffinity), Msg(3, "podAntiAffinity", &kPodAffinity));
FLOTILLA_PB_MESSAGE(kNodeAffinity, "NodeAffinity",
                    Msg(1, "requiredDuringSchedulingIgnoredDuringExecution", &kNodeSelector),
                    Msgs(2, "preferredDuringSchedulingIgnoredDuringExecution",
                         &kPreferredSchedulingTerm));
FLOTILLA_PB_MESSAGE(kNodeSelector, "NodeSelector",
                    Msgs(1, "nodeSelectorTerms", &kNodeSelectorTerm));
FLOTILLA_PB_MESSAGE(kNodeSelectorTerm, "NodeSelectorTerm",
                    Msgs(1, "matchExpressions", &kNodeSelectorRequirement),
                    Msgs(2, "matchFields", &kNodeSelectorRequirement));
FLOTILLA_PB_MESSAGE(kNodeSelectorRequirement, "NodeSelectorRequirement", Str(1, "key"),
                    Str(2, "operator"), Strs(3, "values"));
FLOTILLA_PB_MESSAGE(kPreferredSchedulingTerm, "PreferredSchedulingTerm", I32(1, "weight", P),
                    Msg(2, "preference", &kNodeSelectorTerm));
// PodAffinity and PodAntiAffinity share their layout.
FLOTILLA_PB_MESSAGE(kPodAffinity, "PodAffinity",
                    Msgs(1, "requiredDuringSchedulingIgnoredDuringExecution", &kPodAffinityTerm),
                    Msgs(2, "preferredDuringSchedulingIgnoredDuringExecution",
                         &kWeightedPodAffinityTerm));
FLOTILLA_PB_MESSAGE(kPodAffinityTerm, "PodAffinityTerm", Msg(1, "labelSelector", &kLabelSelector),
                    Strs(2, "namespaces"), Str(3, "topologyKey"),
                    Msg(4, "namespaceSelector", &kLabelSelector), Strs(5, "matchLabelKeys"),
                    Strs(6, "mismatchLabelKeys"));
FLOTILLA_PB_MESSAGE(kWeightedPodAffinityTerm, "WeightedPodAffinityTerm", I32(1, "weight", P),
                    Msg(2, "podAffinityTerm", &kPodAffinityTerm));
FLOTILLA_PB_MESSAGE(kTopologySpreadConstraint, "TopologySpreadConstraint", I32(1, "maxSkew", P),
                    Str(2, "topologyKey"), Str(3, "whenUnsatisfiable"),
                    Msg(4, "labelSelector", &kLabelSelector), I32(5, "minDomains", P),
                    Str(6, "nodeAffinityPolicy", P), Str(7, "nodeTaintsPolicy", P),
                    Strs(8, "matchLabelKeys"));
FLOTILLA_PB_MESSAGE(kHostAlias, "HostAlias", Str(1, "ip"), Strs(2, "hostnames"));
FLOTILLA_PB_MESSAGE(kPodDNSConfig, "PodDNSConfig", Strs(1, "nameservers"), Strs(2, "searches"),
                    Msgs(3, "options", &kPodDNSConfigOption));
FLOTILLA_PB_MESSAGE(kPodDNSConfigOption, "PodDNSConfigOption", Str(1, "name"), Str(2, "value", P));
FLOTILLA_PB_MESSAGE(kPodReadinessGate, "PodReadinessGate", Str(1, "conditionType"));
FLOTILLA_PB_MESSAGE(kPodOS, "PodOS", Str(1, "name"));
FLOTILLA_PB_MESSAGE(kPodSchedulingGate, "PodSchedulingGate", Str(1, "name"));
FLOTILLA_PB_MESSAGE(kPodResourceClaim, "PodResourceClaim", Str(1, "name"),
                    Str(3, "resourceClaimName", P), Str(4, "resourceClaimTemplateName", P));

// core/v1 Service
FLOTILLA_PB_MESSAGE(kService, "Service", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kServiceSpec), Msg(3, "status", &kServiceStatus));
FLOTILLA_PB_MESSAGE(kServiceSpec, "ServiceSpec", Msgs(1, "ports", &kServicePort),
                    MapStr(2, "selector"), Str(3, "clusterIP"), Str(4, "type"),
                    Strs(5, "externalIPs"), Str(7, "sessionAffinity"), Str(8, "loadBalancerIP"),
                    Strs(9, "loadBalancerSourceRanges"), Str(10, "externalName"),
                    Str(11, "externalTrafficPolicy"), I32(12, "healthCheckNodePort"),
                    Bool(13, "publishNotReadyAddresses"),
                    Msg(14, "sessionAffinityConfig", &kSessionAffinityConfig),
                    Str(17, "ipFamilyPolicy", P), Strs(18, "clusterIPs"), Strs(19, "ipFamilies"),
                    Bool(20, "allocateLoadBalancerNodePorts", P), Str(21, "loadBalancerClass", P),
                    Str(22, "internalTrafficPolicy", P), Str(23, "trafficDistribution", P));
FLOTILLA_PB_MESSAGE(kServicePort, "ServicePort", Str(1, "name"), Str(2, "protocol"),
                    I32(3, "port", P), IntStr(4, "targetPort"), I32(5, "nodePort"),
                    Str(6, "appProtocol", P));
FLOTILLA_PB_MESSAGE(kSessionAffinityConfig, "SessionAffinityConfig",
                    Msg(1, "clientIP", &kClientIPConfig));
FLOTILLA_PB_MESSAGE(kClientIPConfig, "ClientIPConfig", I32(1, "timeoutSeconds", P));
FLOTILLA_PB_MESSAGE(kServiceStatus, "ServiceStatus", Msg(1, "loadBalancer", &kLoadBalancerStatus),
                    Msgs(2, "conditions", &kMetaCondition));
FLOTILLA_PB_MESSAGE(kLoadBalancerStatus, "LoadBalancerStatus",
                    Msgs(1, "ingress", &kLoadBalancerIngress));
FLOTILLA_PB_MESSAGE(kLoadBalancerIngress, "LoadBalancerIngress", Str(1, "ip"), Str(2, "hostname"),
                    Str(3, "ipMode", P), Msgs(4, "ports", &kPortStatus));
FLOTILLA_PB_MESSAGE(kPortStatus, "PortStatus", I32(1, "port", P), Str(2, "protocol"),
                    Str(3, "error", P));

// apps/v1
FLOTILLA_PB_MESSAGE(kDeployment, "Deployment", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kDeploymentSpec), Msg(3, "status", &kDeploymentStatus));
FLOTILLA_PB_MESSAGE(kDeploymentSpec, "DeploymentSpec", I32(1, "replicas", P),
                    Msg(2, "selector", &kLabelSelector), Msg(3, "template", &kPodTemplateSpec),
                    Msg(4, "strategy", &kDeploymentStrategy), I32(5, "minReadySeconds"),
                    I32(6, "revisionHistoryLimit", P), Bool(7, "paused"),
                    I32(9, "progressDeadlineSeconds", P), Str(10, "podReplacementPolicy", P));
FLOTILLA_PB_MESSAGE(kDeploymentStrategy, "DeploymentStrategy", Str(1, "type"),
                    Msg(2, "rollingUpdate", &kRollingUpdateDeployment));
FLOTILLA_PB_MESSAGE(kRollingUpdateDeployment, "RollingUpdateDeployment",
                    IntStr(1, "maxUnavailable", P), IntStr(2, "maxSurge", P));
FLOTILLA_PB_MESSAGE(kDeploymentStatus, "DeploymentStatus", I64(1, "observedGeneration"),
                    I32(2, "replicas"), I32(3, "updatedReplicas"), I32(4, "availableReplicas"),
                    I32(5, "unavailableReplicas"), Msgs(6, "conditions", &kDeploymentCondition),
                    I32(7, "readyReplicas"), I32(8, "collisionCount", P),
                    I32(9, "terminatingReplicas", P));
FLOTILLA_PB_MESSAGE(kDeploymentCondition, "DeploymentCondition", Str(1, "type"), Str(2, "status"),
                    Str(4, "reason"), Str(5, "message"), Time(6, "lastUpdateTime"),
                    Time(7, "lastTransitionTime"));
FLOTILLA_PB_MESSAGE(kDaemonSet, "DaemonSet", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kDaemonSetSpec), Msg(3, "status", &kDaemonSetStatus));
FLOTILLA_PB_MESSAGE(kDaemonSetSpec, "DaemonSetSpec", Msg(1, "selector", &kLabelSelector),
                    Msg(2, "template", &kPodTemplateSpec),
                    Msg(3, "updateStrategy", &kDaemonSetUpdateStrategy), I32(4, "minReadySeconds"),
                    I32(6, "revisionHistoryLimit", P));
FLOTILLA_PB_MESSAGE(kDaemonSetUpdateStrategy, "DaemonSetUpdateStrategy", Str(1, "type"),
                    Msg(2, "rollingUpdate", &kRollingUpdateDaemonSet));
FLOTILLA_PB_MESSAGE(kRollingUpdateDaemonSet, "RollingUpdateDaemonSet",
                    IntStr(1, "maxUnavailable", P), IntStr(2, "maxSurge", P));
FLOTILLA_PB_MESSAGE(kDaemonSetStatus, "DaemonSetStatus", I32(1, "currentNumberScheduled"),
                    I32(2, "numberMisscheduled"), I32(3, "desiredNumberScheduled"),
                    I32(4, "numberReady"), I64(5, "observedGeneration"),
                    I32(6, "updatedNumberScheduled"), I32(7, "numberAvailable"),
                    I32(8, "numberUnavailable"), I32(9, "collisionCount", P),
                    Msgs(10, "conditions", &kDaemonSetCondition));
FLOTILLA_PB_MESSAGE(kDaemonSetCondition, "DaemonSetCondition", Str(1, "type"), Str(2, "status"),
                    Time(3, "lastTransitionTime"), Str(4, "reason"), Str(5, "message"));
FLOTILLA_PB_MESSAGE(kJob, "Job", Msg(1, "metadata", &kObjectMeta), Msg(2, "spec", &kJobSpec),
                    Msg(3, "status", &kJobStatus));
FLOTILLA_PB_MESSAGE(kJobSpec, "JobSpec", I32(1, "parallelism", P), I32(2, "completions", P),
                    I64(3, "activeDeadlineSeconds", P), Msg(4, "selector", &kLabelSelector),
                    Bool(5, "manualSelector", P), Msg(6, "template", &kPodTemplateSpec),
                    I32(7, "backoffLimit", P), I32(8, "ttlSecondsAfterFinished", P),
                    Str(9, "completionMode", P), Bool(10, "suspend", P),
                    I32(12, "backoffLimitPerIndex", P), I32(13, "maxFailedIndexes", P),
                    Str(14, "podReplacementPolicy", P), Str(15, "managedBy", P));
FLOTILLA_PB_MESSAGE(kJobStatus, "JobStatus", Msgs(1, "conditions", &kJobCondition),
                    Time(2, "startTime"), Time(3, "completionTime"), I32(4, "active"),
                    I32(5, "succeeded"), I32(6, "failed"), Str(7, "completedIndexes"),
                    Msg(8, "uncountedTerminatedPods", &kUncountedTerminatedPods),
                    I32(9, "ready", P), Str(10, "failedIndexes", P), I32(11, "terminating", P));
FLOTILLA_PB_MESSAGE(kJobCondition, "JobCondition", Str(1, "type"), Str(2, "status"),
                    Time(3, "lastProbeTime"), Time(4, "lastTransitionTime"), Str(5, "reason"),
                    Str(6, "message"));
FLOTILLA_PB_MESSAGE(kUncountedTerminatedPods, "UncountedTerminatedPods", Strs(1, "succeeded"),
                    Strs(2, "failed"));
FLOTILLA_PB_MESSAGE(kCronJob, "CronJob", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kCronJobSpec), Msg(3, "status", &kCronJobStatus));
FLOTILLA_PB_MESSAGE(kCronJobSpec, "CronJobSpec", Str(1, "schedule"),
                    I64(2, "startingDeadlineSeconds", P), Str(3, "concurrencyPolicy"),
                    Bool(4, "suspend", P), Msg(5, "jobTemplate", &kJobTemplateSpec),
                    I32(6, "successfulJobsHistoryLimit", P), I32(7, "failedJobsHistoryLimit", P),
                    Str(8, "timeZone", P));
FLOTILLA_PB_MESSAGE(kCronJobStatus, "CronJobStatus", Msgs(1, "active", &kObjectReference),
                    Time(4, "lastScheduleTime"), Time(5, "lastSuccessfulTime"));
FLOTILLA_PB_MESSAGE(kJobTemplateSpec, "JobTemplateSpec", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kJobSpec));
FLOTILLA_PB_MESSAGE(kReplicaSet, "ReplicaSet", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kReplicaSetSpec), Msg(3, "status", &kReplicaSetStatus));
FLOTILLA_PB_MESSAGE(kReplicaSetSpec, "ReplicaSetSpec", I32(1, "replicas", P),
                    Msg(2, "selector", &kLabelSelector), Msg(3, "template", &kPodTemplateSpec),
                    I32(4, "minReadySeconds"));
FLOTILLA_PB_MESSAGE(kReplicaSetStatus, "ReplicaSetStatus", I32(1, "replicas", P),
                    I32(2, "fullyLabeledReplicas"), I64(3, "observedGeneration"),
                    I32(4, "readyReplicas"), I32(5, "availableReplicas"),
                    Msgs(6, "conditions", &kReplicaSetCondition), I32(7, "terminatingReplicas", P));
FLOTILLA_PB_MESSAGE(kReplicaSetCondition, "ReplicaSetCondition", Str(1, "type"), Str(2, "status"),
                    Time(3, "lastTransitionTime"), Str(4, "reason"), Str(5, "message"));

// autoscaling/v1
FLOTILLA_PB_MESSAGE(kHPAv1, "HorizontalPodAutoscaler", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kHPASpecV1), Msg(3, "status", &kHPAStatusV1));
FLOTILLA_PB_MESSAGE(kHPASpecV1, "HorizontalPodAutoscalerSpec",
                    Msg(1, "scaleTargetRef", &kCrossVersionObjectReference),
                    I32(2, "minReplicas", P), I32(3, "maxReplicas", P),
                    I32(4, "targetCPUUtilizationPercentage", P));
FLOTILLA_PB_MESSAGE(kHPAStatusV1, "HorizontalPodAutoscalerStatus", I64(1, "observedGeneration", P),
                    Time(2, "lastScaleTime"), I32(3, "currentReplicas", P),
                    I32(4, "desiredReplicas", P), I32(5, "currentCPUUtilizationPercentage", P));
FLOTILLA_PB_MESSAGE(kCrossVersionObjectReference, "CrossVersionObjectReference", Str(1, "kind"),
                    Str(2, "name"), Str(3, "apiVersion"));

// autoscaling/v2
FLOTILLA_PB_MESSAGE(kHPAv2, "HorizontalPodAutoscaler", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kHPASpecV2), Msg(3, "status", &kHPAStatusV2));
FLOTILLA_PB_MESSAGE(kHPASpecV2, "HorizontalPodAutoscalerSpec",
                    Msg(1, "scaleTargetRef", &kCrossVersionObjectReference),
                    I32(2, "minReplicas", P), I32(3, "maxReplicas", P),
                    Msgs(4, "metrics", &kMetricSpec), Msg(5, "behavior", &kHPABehavior));
FLOTILLA_PB_MESSAGE(kHPAStatusV2, "HorizontalPodAutoscalerStatus", I64(1, "observedGeneration", P),
                    Time(2, "lastScaleTime"), I32(3, "currentReplicas"),
                    I32(4, "desiredReplicas", P), Msgs(6, "conditions", &kHPACondition));
FLOTILLA_PB_MESSAGE(kMetricSpec, "MetricSpec", Str(1, "type"),
                    Msg(2, "object", &kObjectMetricSource), Msg(3, "pods", &kPodsMetricSource),
                    Msg(4, "resource", &kResourceMetricSource),
                    Msg(5, "external", &kExternalMetricSource),
                    Msg(7, "containerResource", &kContainerResourceMetricSource));
FLOTILLA_PB_MESSAGE(kObjectMetricSource, "ObjectMetricSource",
                    Msg(1, "describedObject", &kCrossVersionObjectReference),
                    Msg(2, "target", &kMetricTarget), Msg(3, "metric", &kMetricIdentifier));
FLOTILLA_PB_MESSAGE(kPodsMetricSource, "PodsMetricSource", Msg(1, "metric", &kMetricIdentifier),
                    Msg(2, "target", &kMetricTarget));
FLOTILLA_PB_MESSAGE(kResourceMetricSource, "ResourceMetricSource", Str(1, "name"),
                    Msg(2, "target", &kMetricTarget));
FLOTILLA_PB_MESSAGE(kContainerResourceMetricSource, "ContainerResourceMetricSource", Str(1, "name"),
                    Msg(2, "target", &kMetricTarget), Str(3, "container"));
FLOTILLA_PB_MESSAGE(kExternalMetricSource, "ExternalMetricSource",
                    Msg(1, "metric", &kMetricIdentifier), Msg(2, "target", &kMetricTarget));
FLOTILLA_PB_MESSAGE(kMetricIdentifier, "MetricIdentifier", Str(1, "name"),
                    Msg(2, "selector", &kLabelSelector));
FLOTILLA_PB_MESSAGE(kMetricTarget, "MetricTarget", Str(1, "type"), Qty(2, "value", P),
                    Qty(3, "averageValue", P), I32(4, "averageUtilization", P));
FLOTILLA_PB_MESSAGE(kHPABehavior, "HorizontalPodAutoscalerBehavior",
                    Msg(1, "scaleUp", &kHPAScalingRules), Msg(2, "scaleDown", &kHPAScalingRules));
FLOTILLA_PB_MESSAGE(kHPAScalingRules, "HPAScalingRules", Str(1, "selectPolicy", P),
                    Msgs(2, "policies", &kHPAScalingPolicy),
                    I32(3, "stabilizationWindowSeconds", P), Qty(4, "tolerance", P));
FLOTILLA_PB_MESSAGE(kHPAScalingPolicy, "HPAScalingPolicy", Str(1, "type"), I32(2, "value", P),
                    I32(3, "periodSeconds", P));
FLOTILLA_PB_MESSAGE(kHPACondition, "HorizontalPodAutoscalerCondition", Str(1, "type"),
                    Str(2, "status"), Time(3, "lastTransitionTime"), Str(4, "reason"),
                    Str(5, "message"));

// rbac.authorization.k8s.io/v1
FLOTILLA_PB_MESSAGE(kPolicyRule, "PolicyRule", Strs(1, "verbs"), Strs(2, "apiGroups"),
                    Strs(3, "resources"), Strs(4, "resourceNames"), Strs(5, "nonResourceURLs"));
FLOTILLA_PB_MESSAGE(kAggregationRule, "AggregationRule",
                    Msgs(1, "clusterRoleSelectors", &kLabelSelector));
FLOTILLA_PB_MESSAGE(kRole, "Role", Msg(1, "metadata", &kObjectMeta),
                    Msgs(2, "rules", &kPolicyRule));
FLOTILLA_PB_MESSAGE(kClusterRole, "ClusterRole", Msg(1, "metadata", &kObjectMeta),
                    Msgs(2, "rules", &kPolicyRule), Msg(3, "aggregationRule", &kAggregationRule));
FLOTILLA_PB_MESSAGE(kSubject, "Subject", Str(1, "kind"), Str(2, "apiGroup"), Str(3, "name"),
                    Str(4, "namespace"));
FLOTILLA_PB_MESSAGE(kRoleRef, "RoleRef", Str(1, "apiGroup"), Str(2, "kind"), Str(3, "name"));
FLOTILLA_PB_MESSAGE(kRoleBinding, "RoleBinding", Msg(1, "metadata", &kObjectMeta),
                    Msgs(2, "subjects", &kSubject), Msg(3, "roleRef", &kRoleRef));
FLOTILLA_PB_MESSAGE(kClusterRoleBinding, "ClusterRoleBinding", Msg(1, "metadata", &kObjectMeta),
                    Msgs(2, "subjects", &kSubject), Msg(3, "roleRef", &kRoleRef));

// authentication.k8s.io/v1 TokenRequest (serviceaccounts/token)
FLOTILLA_PB_MESSAGE(kTokenRequest, "TokenRequest", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kTokenRequestSpec), Msg(3, "status", &kTokenRequestStatus));
FLOTILLA_PB_MESSAGE(kTokenRequestSpec, "TokenRequestSpec", Strs(1, "audiences"),
                    Msg(3, "boundObjectRef", &kBoundObjectReference),
                    I64(4, "expirationSeconds", P));
FLOTILLA_PB_MESSAGE(kTokenRequestStatus, "TokenRequestStatus", Str(1, "token"),
                    Time(2, "expirationTimestamp"));
FLOTILLA_PB_MESSAGE(kBoundObjectReference, "BoundObjectReference", Str(1, "kind"),
                    Str(2, "apiVersion"), Str(3, "name"), Str(4, "uid"));

FLOTILLA_PB_MESSAGE(kSelfSubjectReview, "SelfSubjectReview", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "status", &kSelfSubjectReviewStatus));
FLOTILLA_PB_MESSAGE(kSelfSubjectReviewStatus, "SelfSubjectReviewStatus",
                    Msg(1, "userInfo", &kUserInfo));
FLOTILLA_PB_MESSAGE(kUserInfo, "UserInfo", Str(1, "username"), Str(2, "uid"), Strs(3, "groups"));

// authorization.k8s.io/v1 access reviews
FLOTILLA_PB_MESSAGE(kResourceAttributes, "ResourceAttributes", Str(1, "namespace"), Str(2, "verb"),
                    Str(3, "group"), Str(4, "version"), Str(5, "resource"), Str(6, "subresource"),
                    Str(7, "name"));
FLOTILLA_PB_MESSAGE(kNonResourceAttributes, "NonResourceAttributes", Str(1, "path"),
                    Str(2, "verb"));
FLOTILLA_PB_MESSAGE(kSubjectAccessReviewStatus, "SubjectAccessReviewStatus", Bool(1, "allowed"),
                    Str(2, "reason"), Str(3, "evaluationError"), Bool(4, "denied"));
FLOTILLA_PB_MESSAGE(kSelfSubjectAccessReview, "SelfSubjectAccessReview",
                    Msg(1, "metadata", &kObjectMeta), Msg(2, "spec", &kSelfSubjectAccessReviewSpec),
                    Msg(3, "status", &kSubjectAccessReviewStatus));
FLOTILLA_PB_MESSAGE(kSelfSubjectAccessReviewSpec, "SelfSubjectAccessReviewSpec",
                    Msg(1, "resourceAttributes", &kResourceAttributes),
                    Msg(2, "nonResourceAttributes", &kNonResourceAttributes));
FLOTILLA_PB_MESSAGE(kSubjectAccessReview, "SubjectAccessReview", Msg(1, "metadata", &kObjectMeta),
                    Msg(2, "spec", &kSubjectAccessReviewSpec),
                    Msg(3, "status", &kSubjectAccessReviewStatus));
FLOTILLA_PB_MESSAGE(kSubjectAccessReviewSpec, "SubjectAccessReviewSpec",
                    Msg(1, "resourceAttributes", &kResourceAttributes),
                    Msg(2, "nonResourceAttributes", &kNonResourceAttributes), Str(3, "user"),
                    Strs(4, "groups"), Str(6, "uid"));
FLOTILLA_PB_MESSAGE(kSelfSubjectRulesReview, "SelfSubjectRulesReview",
                    Msg(1, "metadata", &kObjectMeta), Msg(2, "spec", &kSelfSubjectRulesReviewSpec),
                    Msg(3, "status", &kSubjectRulesReviewStatus));
FLOTILLA_PB_MESSAGE(kSubjectRulesReviewStatus, "SubjectRulesReviewStatus",
                    Msgs(1, "resourceRules", &kResourceRule),
                    Msgs(2, "nonResourceRules", &kNonResourceRule), Bool(3, "incomplete"),
                    Str(4, "evaluationError"));
FLOTILLA_PB_MESSAGE(kResourceRule, "ResourceRule", Strs(1, "verbs"), Strs(2, "apiGroups"),
                    Strs(3, "resources"), Strs(4, "resourceNames"));
FLOTILLA_PB_MESSAGE(kNonResourceRule, "NonResourceRule", Strs(1, "verbs"),
                    Strs(2, "nonResourceURLs"));
FLOTILLA_PB_MESSAGE(kSelfSubjectRulesReviewSpec, "SelfSubjectRulesReviewSpec", Str(1, "namespace"));

#undef FLOTILLA_PB_MESSAGE

namespace {

struct ObjectKind {
  std::string_view api_version;
  std::string_view kind;
  const Message* message;
};

const ObjectKind kObjectKinds[] = {
    {"v1", "Namespace", &kNamespace},
    {"v1", "ConfigMap", &kConfigMap},
    {"v1", "Secret", &kSecret},
    {"v1", "ServiceAccount", &kServiceAccount},
    {"v1", "Pod", &kPod},
    {"v1", "Service", &kService},
    {"v1", "Binding", &kBinding},
    {"v1", "ResourceQuota", &kResourceQuota},
    {"apps/v1", "Deployment", &kDeployment},
    {"apps/v1", "DaemonSet", &kDaemonSet},
    {"apps/v1", "ReplicaSet", &kReplicaSet},
    {"batch/v1", "Job", &kJob},
    {"batch/v1", "CronJob", &kCronJob},
    {"autoscaling/v1", "HorizontalPodAutoscaler", &kHPAv1},
    {"autoscaling/v2", "HorizontalPodAutoscaler", &kHPAv2},
    {"rbac.authorization.k8s.io/v1", "Role", &kRole},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", &kClusterRole},
    {"rbac.authorization.k8s.io/v1", "RoleBinding", &kRoleBinding},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", &kClusterRoleBinding},
    {"authentication.k8s.io/v1", "TokenRequest", &kTokenRequest},
    {"authentication.k8s.io/v1", "SelfSubjectReview", &kSelfSubjectReview},
    {"authorization.k8s.io/v1", "SelfSubjectAccessReview", &kSelfSubjectAccessReview},
    {"authorization.k8s.io/v1", "LocalSubjectAccessReview", &kSubjectAccessReview},
    {"authorization.k8s.io/v1", "SubjectAccessReview", &kSubjectAccessReview},
    {"authorization.k8s.io/v1", "SelfSubjectRulesReview", &kSelfSubjectRulesReview},
};

}  // namespace

const Message* FindObjectMessage(std::string_view api_version, std::string_view kind) {
  for (const ObjectKind& k : kObjectKinds) {
    if (k.api_version == api_version && k.kind == kind) return k.message;
  }
  return nullptr;
}

}  // namespace flotilla::api::protobuf
