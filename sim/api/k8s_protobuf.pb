
—
4k8s.io/apimachinery/pkg/api/resource/generated.proto$k8s.io.apimachinery.pkg.api.resource""
Quantity
string (	Rstring"'
QuantityValue
string (	RstringB&Z$k8s.io/apimachinery/pkg/api/resource
à
/k8s.io/apimachinery/pkg/runtime/generated.protok8s.io.apimachinery.pkg.runtime" 
RawExtension
raw (Rraw">
TypeMeta

apiVersion (	R
apiVersion
kind (	Rkind"Æ
UnknownE
typeMeta (2).k8s.io.apimachinery.pkg.runtime.TypeMetaRtypeMeta
raw (Rraw(
contentEncoding (	RcontentEncoding 
contentType (	RcontentTypeB!Zk8s.io/apimachinery/pkg/runtime
ä
6k8s.io/apimachinery/pkg/runtime/schema/generated.proto&k8s.io.apimachinery.pkg.runtime.schemaB(Z&k8s.io/apimachinery/pkg/runtime/schema
Ù9
4k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto$k8s.io.apimachinery.pkg.apis.meta.v1/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto"Á
APIGroup
name (	RnameZ
versions (2>.k8s.io.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscoveryRversionsj
preferredVersion (2>.k8s.io.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscoveryRpreferredVersion
serverAddressByClientCIDRs (2?.k8s.io.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDRRserverAddressByClientCIDRs"V
APIGroupListF
groups (2..k8s.io.apimachinery.pkg.apis.meta.v1.APIGroupRgroups"‹
APIResource
name (	Rname"
singularName (	RsingularName

namespaced (R
namespaced
group (	Rgroup
version	 (	Rversion
kind (	RkindA
verbs (2+.k8s.io.apimachinery.pkg.apis.meta.v1.VerbsRverbs

shortNames (	R
shortNames

categories (	R
categories.
storageVersionHash
 (	RstorageVersionHash"Ü
APIResourceList"
groupVersion (	RgroupVersionO
	resources (21.k8s.io.apimachinery.pkg.apis.meta.v1.APIResourceR	resources"™
APIVersions
versions (	Rversions
serverAddressByClientCIDRs (2?.k8s.io.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDRRserverAddressByClientCIDRs"`
ApplyOptions
dryRun (	RdryRun
force (Rforce"
fieldManager (	RfieldManager"ı
	Condition
type (	Rtype
status (	Rstatus.
observedGeneration (RobservedGenerationZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"u
CreateOptions
dryRun (	RdryRun"
fieldManager (	RfieldManager(
fieldValidation (	RfieldValidation"¯
DeleteOptions.
gracePeriodSeconds (RgracePeriodSecondsY
preconditions (23.k8s.io.apimachinery.pkg.apis.meta.v1.PreconditionsRpreconditions*
orphanDependents (RorphanDependents,
propagationPolicy (	RpropagationPolicy
dryRun (	RdryRunj
0ignoreStoreReadErrorWithClusterBreakingPotential (R0ignoreStoreReadErrorWithClusterBreakingPotential"&
Duration
duration (Rduration"`
FieldSelectorRequirement
key (	Rkey
operator (	Roperator
values (	Rvalues"
FieldsV1
Raw (RRaw"6

GetOptions(
resourceVersion (	RresourceVersion"5
	GroupKind
group (	Rgroup
kind (	Rkind"A
GroupResource
group (	Rgroup
resource (	Rresource">
GroupVersion
group (	Rgroup
version (	Rversion"X
GroupVersionForDiscovery"
groupVersion (	RgroupVersion
version (	Rversion"V
GroupVersionKind
group (	Rgroup
version (	Rversion
kind (	Rkind"b
GroupVersionResource
group (	Rgroup
version (	Rversion
resource (	Rresource"£
LabelSelectorf
matchLabels (2D.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector.MatchLabelsEntryRmatchLabelsj
matchExpressions (2>.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirementRmatchExpressions>
MatchLabelsEntry
key (	Rkey
value (	Rvalue:8"`
LabelSelectorRequirement
key (	Rkey
operator (	Roperator
values (	Rvalues"ó
ListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataC
items (2-.k8s.io.apimachinery.pkg.runtime.RawExtensionRitems"Î
ListMeta
selfLink (	RselfLink(
resourceVersion (	RresourceVersion
continue (	Rcontinue.
remainingItemCount (RremainingItemCountM
	shardInfo (2/.k8s.io.apimachinery.pkg.apis.meta.v1.ShardInfoR	shardInfo"≠
ListOptions$
labelSelector (	RlabelSelector$
fieldSelector (	RfieldSelector
watch (Rwatch0
allowWatchBookmarks	 (RallowWatchBookmarks(
resourceVersion (	RresourceVersion2
resourceVersionMatch
 (	RresourceVersionMatch&
timeoutSeconds (RtimeoutSeconds
limit (Rlimit
continue (	Rcontinue,
sendInitialEvents (RsendInitialEvents$
shardSelector (	RshardSelector"∫
ManagedFieldsEntry
manager (	Rmanager
	operation (	R	operation

apiVersion (	R
apiVersion>
time (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRtime

fieldsType (	R
fieldsTypeJ
fieldsV1 (2..k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1RfieldsV1 
subresource (	Rsubresource";
	MicroTime
seconds (Rseconds
nanos (Rnanos"‰

ObjectMeta
name (	Rname"
generateName (	RgenerateName
	namespace (	R	namespace
selfLink (	RselfLink
uid (	Ruid(
resourceVersion (	RresourceVersion

generation (R
generationX
creationTimestamp (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRcreationTimestampX
deletionTimestamp	 (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRdeletionTimestamp>
deletionGracePeriodSeconds
 (RdeletionGracePeriodSecondsT
labels (2<.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta.LabelsEntryRlabelsc
annotations (2A.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta.AnnotationsEntryRannotations^
ownerReferences (24.k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReferenceRownerReferences

finalizers (	R
finalizers^
managedFields (28.k8s.io.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntryRmanagedFields9
LabelsEntry
key (	Rkey
value (	Rvalue:8>
AnnotationsEntry
key (	Rkey
value (	Rvalue:8"∫
OwnerReference

apiVersion (	R
apiVersion
kind (	Rkind
name (	Rname
uid (	Ruid

controller (R
controller.
blockOwnerDeletion (RblockOwnerDeletion"e
PartialObjectMetadataL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata"∫
PartialObjectMetadataListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataQ
items (2;.k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataRitems"
Patch"ä
PatchOptions
dryRun (	RdryRun
force (Rforce"
fieldManager (	RfieldManager(
fieldValidation (	RfieldValidation"K
Preconditions
uid (	Ruid(
resourceVersion (	RresourceVersion"!
	RootPaths
paths (	Rpaths"a
ServerAddressByClientCIDR

clientCIDR (	R
clientCIDR$
serverAddress (	RserverAddress"'
	ShardInfo
selector (	Rselector"Å
StatusJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata
status (	Rstatus
message (	Rmessage
reason (	RreasonM
details (23.k8s.io.apimachinery.pkg.apis.meta.v1.StatusDetailsRdetails
code (Rcode"U
StatusCause
reason (	Rreason
message (	Rmessage
field (	Rfield"ÿ
StatusDetails
name (	Rname
group (	Rgroup
kind (	Rkind
uid (	RuidI
causes (21.k8s.io.apimachinery.pkg.apis.meta.v1.StatusCauseRcauses,
retryAfterSeconds (RretryAfterSeconds"4
TableOptions$
includeObject (	RincludeObject"6
Time
seconds (Rseconds
nanos (Rnanos";
	Timestamp
seconds (Rseconds
nanos (Rnanos">
TypeMeta
kind (	Rkind

apiVersion (	R
apiVersion"u
UpdateOptions
dryRun (	RdryRun"
fieldManager (	RfieldManager(
fieldValidation (	RfieldValidation"
Verbs
items (	Ritems"g

WatchEvent
type (	RtypeE
object (2-.k8s.io.apimachinery.pkg.runtime.RawExtensionRobjectB&Z$k8s.io/apimachinery/pkg/apis/meta/v1
‘
3k8s.io/apimachinery/pkg/util/intstr/generated.proto#k8s.io.apimachinery.pkg.util.intstr"Q
IntOrString
type (Rtype
intVal (RintVal
strVal (	RstrValB%Z#k8s.io/apimachinery/pkg/util/intstr
∫Õ
"k8s.io/api/core/v1/generated.protok8s.io.api.core.v14k8s.io/apimachinery/pkg/api/resource/generated.proto4k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto3k8s.io/apimachinery/pkg/util/intstr/generated.proto"ê
 AWSElasticBlockStoreVolumeSource
volumeID (	RvolumeID
fsType (	RfsType
	partition (R	partition
readOnly (RreadOnly"‚
AffinityD
nodeAffinity (2 .k8s.io.api.core.v1.NodeAffinityRnodeAffinityA
podAffinity (2.k8s.io.api.core.v1.PodAffinityRpodAffinityM
podAntiAffinity (2#.k8s.io.api.core.v1.PodAntiAffinityRpodAntiAffinity"Q
AppArmorProfile
type (	Rtype*
localhostProfile (	RlocalhostProfile"D
AttachedVolume
name (	Rname

devicePath (	R
devicePath"_
	AvoidPodsR
preferAvoidPods (2(.k8s.io.api.core.v1.PreferAvoidPodsEntryRpreferAvoidPods"∑
AzureDiskVolumeSource
diskName (	RdiskName
diskURI (	RdiskURI 
cachingMode (	RcachingMode
fsType (	RfsType
readOnly (RreadOnly
kind (	Rkind"•
AzureFilePersistentVolumeSource

secretName (	R
secretName
	shareName (	R	shareName
readOnly (RreadOnly(
secretNamespace (	RsecretNamespace"q
AzureFileVolumeSource

secretName (	R
secretName
	shareName (	R	shareName
readOnly (RreadOnly"î
BindingL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
target (2#.k8s.io.api.core.v1.ObjectReferenceRtarget"é
CSIPersistentVolumeSource
driver (	Rdriver"
volumeHandle (	RvolumeHandle
readOnly (RreadOnly
fsType (	RfsTypeo
volumeAttributes (2C.k8s.io.api.core.v1.CSIPersistentVolumeSource.VolumeAttributesEntryRvolumeAttributesc
controllerPublishSecretRef (2#.k8s.io.api.core.v1.SecretReferenceRcontrollerPublishSecretRefS
nodeStageSecretRef (2#.k8s.io.api.core.v1.SecretReferenceRnodeStageSecretRefW
nodePublishSecretRef (2#.k8s.io.api.core.v1.SecretReferenceRnodePublishSecretRefa
controllerExpandSecretRef	 (2#.k8s.io.api.core.v1.SecretReferenceRcontrollerExpandSecretRefU
nodeExpandSecretRef
 (2#.k8s.io.api.core.v1.SecretReferenceRnodeExpandSecretRefC
VolumeAttributesEntry
key (	Rkey
value (	Rvalue:8"Á
CSIVolumeSource
driver (	Rdriver
readOnly (RreadOnly
fsType (	RfsTypee
volumeAttributes (29.k8s.io.api.core.v1.CSIVolumeSource.VolumeAttributesEntryRvolumeAttributes\
nodePublishSecretRef (2(.k8s.io.api.core.v1.LocalObjectReferenceRnodePublishSecretRefC
VolumeAttributesEntry
key (	Rkey
value (	Rvalue:8"4
Capabilities
add (	Radd
drop (	Rdrop"·
CephFSPersistentVolumeSource
monitors (	Rmonitors
path (	Rpath
user (	Ruser

secretFile (	R
secretFileA
	secretRef (2#.k8s.io.api.core.v1.SecretReferenceR	secretRef
readOnly (RreadOnly"‹
CephFSVolumeSource
monitors (	Rmonitors
path (	Rpath
user (	Ruser

secretFile (	R
secretFileF
	secretRef (2(.k8s.io.api.core.v1.LocalObjectReferenceR	secretRef
readOnly (RreadOnly"±
CinderPersistentVolumeSource
volumeID (	RvolumeID
fsType (	RfsType
readOnly (RreadOnlyA
	secretRef (2#.k8s.io.api.core.v1.SecretReferenceR	secretRef"¨
CinderVolumeSource
volumeID (	RvolumeID
fsType (	RfsType
readOnly (RreadOnlyF
	secretRef (2(.k8s.io.api.core.v1.LocalObjectReferenceR	secretRef"8
ClientIPConfig&
timeoutSeconds (RtimeoutSeconds"Ò
ClusterTrustBundleProjection
name (	Rname

signerName (	R
signerNameY
labelSelector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRlabelSelector
optional (Roptional
path (	Rpath
user (Ruser"p
ComponentCondition
type (	Rtype
status (	Rstatus
message (	Rmessage
error (	Rerror"ß
ComponentStatusL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataF

conditions (2&.k8s.io.api.core.v1.ComponentConditionR
conditions"ú
ComponentStatusListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.k8s.io.api.core.v1.ComponentStatusRitems"˚
	ConfigMapL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
	immutable (R	immutable;
data (2'.k8s.io.api.core.v1.ConfigMap.DataEntryRdataM

binaryData (2-.k8s.io.api.core.v1.ConfigMap.BinaryDataEntryR
binaryData7
	DataEntry
key (	Rkey
value (	Rvalue:8=
BinaryDataEntry
key (	Rkey
value (Rvalue:8"é
ConfigMapEnvSource\
localObjectReference (2(.k8s.io.api.core.v1.LocalObjectReferenceRlocalObjectReference
optional (Roptional"¢
ConfigMapKeySelector\
localObjectReference (2(.k8s.io.api.core.v1.LocalObjectReferenceRlocalObjectReference
key (	Rkey
optional (Roptional"ê
ConfigMapListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata3
items (2.k8s.io.api.core.v1.ConfigMapRitems"µ
ConfigMapNodeConfigSource
	namespace (	R	namespace
name (	Rname
uid (	Ruid(
resourceVersion (	RresourceVersion*
kubeletConfigKey (	RkubeletConfigKey"ƒ
ConfigMapProjection\
localObjectReference (2(.k8s.io.api.core.v1.LocalObjectReferenceRlocalObjectReference3
items (2.k8s.io.api.core.v1.KeyToPathRitems
optional (Roptional"ä
ConfigMapVolumeSource\
localObjectReference (2(.k8s.io.api.core.v1.LocalObjectReferenceRlocalObjectReference3
items (2.k8s.io.api.core.v1.KeyToPathRitems 
defaultMode (RdefaultMode
optional (Roptional 
defaultUser (RdefaultUser"˛	
	Container
name (	Rname
image (	Rimage
command (	Rcommand
args (	Rargs

workingDir (	R
workingDir7
ports (2!.k8s.io.api.core.v1.ContainerPortRports;
envFrom (2!.k8s.io.api.core.v1.EnvFromSourceRenvFrom,
env (2.k8s.io.api.core.v1.EnvVarRenvF
	resources (2(.k8s.io.api.core.v1.ResourceRequirementsR	resourcesM
resizePolicy (2).k8s.io.api.core.v1.ContainerResizePolicyRresizePolicy$
restartPolicy (	RrestartPolicyX
restartPolicyRules (2(.k8s.io.api.core.v1.ContainerRestartRuleRrestartPolicyRulesC
volumeMounts	 (2.k8s.io.api.core.v1.VolumeMountRvolumeMountsF
volumeDevices (2 .k8s.io.api.core.v1.VolumeDeviceRvolumeDevices?
livenessProbe
 (2.k8s.io.api.core.v1.ProbeRlivenessProbeA
readinessProbe (2.k8s.io.api.core.v1.ProbeRreadinessProbe=
startupProbe (2.k8s.io.api.core.v1.ProbeRstartupProbe;
	lifecycle (2.k8s.io.api.core.v1.LifecycleR	lifecycle6
terminationMessagePath (	RterminationMessagePath:
terminationMessagePolicy (	RterminationMessagePolicy(
imagePullPolicy (	RimagePullPolicyM
securityContext (2#.k8s.io.api.core.v1.SecurityContextRsecurityContext
stdin (Rstdin
	stdinOnce (R	stdinOnce
tty (Rtty"é
 ContainerExtendedResourceRequest$
containerName (	RcontainerName"
resourceName (	RresourceName 
requestName (	RrequestName"D
ContainerImage
names (	Rnames
	sizeBytes (R	sizeBytes"ô
ContainerPort
name (	Rname
hostPort (RhostPort$
containerPort (RcontainerPort
protocol (	Rprotocol
hostIP (	RhostIP"a
ContainerResizePolicy"
resourceName (	RresourceName$
restartPolicy (	RrestartPolicy"Å
ContainerRestartRule
action (	RactionQ
	exitCodes (23.k8s.io.api.core.v1.ContainerRestartRuleOnExitCodesR	exitCodes"U
ContainerRestartRuleOnExitCodes
operator (	Roperator
values (Rvalues"Ë
ContainerStateC
waiting (2).k8s.io.api.core.v1.ContainerStateWaitingRwaitingC
running (2).k8s.io.api.core.v1.ContainerStateRunningRrunningL

terminated (2,.k8s.io.api.core.v1.ContainerStateTerminatedR
terminated"a
ContainerStateRunningH
	startedAt (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeR	startedAt"∏
ContainerStateTerminated
exitCode (RexitCode
signal (Rsignal
reason (	Rreason
message (	RmessageH
	startedAt (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeR	startedAtJ

finishedAt (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeR
finishedAt 
containerID (	RcontainerID"I
ContainerStateWaiting
reason (	Rreason
message (	Rmessage"ı
ContainerStatus
name (	Rname8
state (2".k8s.io.api.core.v1.ContainerStateRstate@
	lastState (2".k8s.io.api.core.v1.ContainerStateR	lastState
ready (Rready"
restartCount (RrestartCount
image (	Rimage
imageID (	RimageID 
containerID (	RcontainerID
started	 (Rstartedk
allocatedResources
 (2;.k8s.io.api.core.v1.ContainerStatus.AllocatedResourcesEntryRallocatedResourcesF
	resources (2(.k8s.io.api.core.v1.ResourceRequirementsR	resourcesI
volumeMounts (2%.k8s.io.api.core.v1.VolumeMountStatusRvolumeMounts5
user (2!.k8s.io.api.core.v1.ContainerUserRuser^
allocatedResourcesStatus (2".k8s.io.api.core.v1.ResourceStatusRallocatedResourcesStatus

stopSignal (	R
stopSignalu
AllocatedResourcesEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"M
ContainerUser<
linux (2&.k8s.io.api.core.v1.LinuxContainerUserRlinux"$
DaemonEndpoint
Port (RPort"X
DownwardAPIProjection?
items (2).k8s.io.api.core.v1.DownwardAPIVolumeFileRitems"Ô
DownwardAPIVolumeFile
path (	RpathC
fieldRef (2'.k8s.io.api.core.v1.ObjectFieldSelectorRfieldRefU
resourceFieldRef (2).k8s.io.api.core.v1.ResourceFieldSelectorRresourceFieldRef
mode (Rmode
user (Ruser"û
DownwardAPIVolumeSource?
items (2).k8s.io.api.core.v1.DownwardAPIVolumeFileRitems 
defaultMode (RdefaultMode 
defaultUser (RdefaultUser"ê
EmptyDirVolumeSource
medium (	RmediumL
	sizeLimit (2..k8s.io.apimachinery.pkg.api.resource.QuantityR	sizeLimit
mode (Rmode"ú
EndpointAddress
ip (	Rip
hostname (	Rhostname
nodeName (	RnodeNameA
	targetRef (2#.k8s.io.api.core.v1.ObjectReferenceR	targetRef"t
EndpointPort
name (	Rname
port (Rport
protocol (	Rprotocol 
appProtocol (	RappProtocol"ﬁ
EndpointSubsetA
	addresses (2#.k8s.io.api.core.v1.EndpointAddressR	addressesQ
notReadyAddresses (2#.k8s.io.api.core.v1.EndpointAddressRnotReadyAddresses6
ports (2 .k8s.io.api.core.v1.EndpointPortRports"ó
	EndpointsL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata<
subsets (2".k8s.io.api.core.v1.EndpointSubsetRsubsets"ê
EndpointsListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata3
items (2.k8s.io.api.core.v1.EndpointsRitems"∂
EnvFromSource
prefix (	RprefixJ
configMapRef (2&.k8s.io.api.core.v1.ConfigMapEnvSourceRconfigMapRefA
	secretRef (2#.k8s.io.api.core.v1.SecretEnvSourceR	secretRef"r
EnvVar
name (	Rname
value (	Rvalue>
	valueFrom (2 .k8s.io.api.core.v1.EnvVarSourceR	valueFrom"é
EnvVarSourceC
fieldRef (2'.k8s.io.api.core.v1.ObjectFieldSelectorRfieldRefU
resourceFieldRef (2).k8s.io.api.core.v1.ResourceFieldSelectorRresourceFieldRefR
configMapKeyRef (2(.k8s.io.api.core.v1.ConfigMapKeySelectorRconfigMapKeyRefI
secretKeyRef (2%.k8s.io.api.core.v1.SecretKeySelectorRsecretKeyRefC

fileKeyRef (2#.k8s.io.api.core.v1.FileKeySelectorR
fileKeyRef"∞
EphemeralContainerh
ephemeralContainerCommon (2,.k8s.io.api.core.v1.EphemeralContainerCommonRephemeralContainerCommon0
targetContainerName (	RtargetContainerName"ç

EphemeralContainerCommon
name (	Rname
image (	Rimage
command (	Rcommand
args (	Rargs

workingDir (	R
workingDir7
ports (2!.k8s.io.api.core.v1.ContainerPortRports;
envFrom (2!.k8s.io.api.core.v1.EnvFromSourceRenvFrom,
env (2.k8s.io.api.core.v1.EnvVarRenvF
	resources (2(.k8s.io.api.core.v1.ResourceRequirementsR	resourcesM
resizePolicy (2).k8s.io.api.core.v1.ContainerResizePolicyRresizePolicy$
restartPolicy (	RrestartPolicyX
restartPolicyRules (2(.k8s.io.api.core.v1.ContainerRestartRuleRrestartPolicyRulesC
volumeMounts	 (2.k8s.io.api.core.v1.VolumeMountRvolumeMountsF
volumeDevices (2 .k8s.io.api.core.v1.VolumeDeviceRvolumeDevices?
livenessProbe
 (2.k8s.io.api.core.v1.ProbeRlivenessProbeA
readinessProbe (2.k8s.io.api.core.v1.ProbeRreadinessProbe=
startupProbe (2.k8s.io.api.core.v1.ProbeRstartupProbe;
	lifecycle (2.k8s.io.api.core.v1.LifecycleR	lifecycle6
terminationMessagePath (	RterminationMessagePath:
terminationMessagePolicy (	RterminationMessagePolicy(
imagePullPolicy (	RimagePullPolicyM
securityContext (2#.k8s.io.api.core.v1.SecurityContextRsecurityContext
stdin (Rstdin
	stdinOnce (R	stdinOnce
tty (Rtty"|
EphemeralVolumeSourcec
volumeClaimTemplate (21.k8s.io.api.core.v1.PersistentVolumeClaimTemplateRvolumeClaimTemplate"ö
EventL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataK
involvedObject (2#.k8s.io.api.core.v1.ObjectReferenceRinvolvedObject
reason (	Rreason
message (	Rmessage7
source (2.k8s.io.api.core.v1.EventSourceRsourceR
firstTimestamp (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRfirstTimestampP
lastTimestamp (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTimestamp
count (Rcount
type	 (	RtypeM
	eventTime
 (2/.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTimeR	eventTime7
series (2.k8s.io.api.core.v1.EventSeriesRseries
action (	Raction=
related (2#.k8s.io.api.core.v1.ObjectReferenceRrelated.
reportingComponent (	RreportingComponent,
reportingInstance (	RreportingInstance"à
	EventListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata/
items (2.k8s.io.api.core.v1.EventRitems"Ä
EventSeries
count (Rcount[
lastObservedTime (2/.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTimeRlastObservedTime"?
EventSource
	component (	R	component
host (	Rhost"C
EvictionResponder
name (	Rname
priority (Rpriority"&

ExecAction
command (	Rcommand"å
FCVolumeSource

targetWWNs (	R
targetWWNs
lun (Rlun
fsType (	RfsType
readOnly (RreadOnly
wwids (	Rwwids"s
FileKeySelector

volumeName (	R
volumeName
path (	Rpath
key (	Rkey
optional (Roptional"æ
FlexPersistentVolumeSource
driver (	Rdriver
fsType (	RfsTypeA
	secretRef (2#.k8s.io.api.core.v1.SecretReferenceR	secretRef
readOnly (RreadOnlyU
options (2;.k8s.io.api.core.v1.FlexPersistentVolumeSource.OptionsEntryRoptions:
OptionsEntry
key (	Rkey
value (	Rvalue:8"Ø
FlexVolumeSource
driver (	Rdriver
fsType (	RfsTypeF
	secretRef (2(.k8s.io.api.core.v1.LocalObjectReferenceR	secretRef
readOnly (RreadOnlyK
options (21.k8s.io.api.core.v1.FlexVolumeSource.OptionsEntryRoptions:
OptionsEntry
key (	Rkey
value (	Rvalue:8"Y
FlockerVolumeSource 
datasetName (	RdatasetName 
datasetUUID (	RdatasetUUID"â
GCEPersistentDiskVolumeSource
pdName (	RpdName
fsType (	RfsType
	partition (R	partition
readOnly (RreadOnly"N

GRPCAction
port (Rport
service (	Rservice
mode (	Rmode"o
GitRepoVolumeSource

repository (	R
repository
revision (	Rrevision
	directory (	R	directory"ü
GlusterfsPersistentVolumeSource
	endpoints (	R	endpoints
path (	Rpath
readOnly (RreadOnly.
endpointsNamespace (	RendpointsNamespace"e
GlusterfsVolumeSource
	endpoints (	R	endpoints
path (	Rpath
readOnly (RreadOnly"Û
HTTPGetAction
path (	RpathD
port (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringRport
host (	Rhost
scheme (	Rscheme@
httpHeaders (2.k8s.io.api.core.v1.HTTPHeaderRhttpHeaders
protocol (	Rprotocol"6

HTTPHeader
name (	Rname
value (	Rvalue"9
	HostAlias
ip (	Rip
	hostnames (	R	hostnames"
HostIP
ip (	Rip">
HostPathVolumeSource
path (	Rpath
type (	Rtype"ú
ISCSIPersistentVolumeSource"
targetPortal (	RtargetPortal
iqn (	Riqn
lun (Rlun&
iscsiInterface (	RiscsiInterface
fsType (	RfsType
readOnly (RreadOnly
portals (	Rportals,
chapAuthDiscovery (RchapAuthDiscovery(
chapAuthSession (RchapAuthSessionA
	secretRef
 (2#.k8s.io.api.core.v1.SecretReferenceR	secretRef$
initiatorName (	RinitiatorName"ó
ISCSIVolumeSource"
targetPortal (	RtargetPortal
iqn (	Riqn
lun (Rlun&
iscsiInterface (	RiscsiInterface
fsType (	RfsType
readOnly (RreadOnly
portals (	Rportals,
chapAuthDiscovery (RchapAuthDiscovery(
chapAuthSession (RchapAuthSessionF
	secretRef
 (2(.k8s.io.api.core.v1.LocalObjectReferenceR	secretRef$
initiatorName (	RinitiatorName"Q
ImageVolumeSource
	reference (	R	reference

pullPolicy (	R
pullPolicy"/
ImageVolumeStatus
imageRef (	RimageRef"Y
	KeyToPath
key (	Rkey
path (	Rpath
mode (Rmode
user (Ruser"Ø
	LifecycleB
	postStart (2$.k8s.io.api.core.v1.LifecycleHandlerR	postStart>
preStop (2$.k8s.io.api.core.v1.LifecycleHandlerRpreStop

stopSignal (	R
stopSignal"˝
LifecycleHandler2
exec (2.k8s.io.api.core.v1.ExecActionRexec;
httpGet (2!.k8s.io.api.core.v1.HTTPGetActionRhttpGetA
	tcpSocket (2#.k8s.io.api.core.v1.TCPSocketActionR	tcpSocket5
sleep (2.k8s.io.api.core.v1.SleepActionRsleep"í

LimitRangeL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
spec (2".k8s.io.api.core.v1.LimitRangeSpecRspec"Á
LimitRangeItem
type (	Rtype=
max (2+.k8s.io.api.core.v1.LimitRangeItem.MaxEntryRmax=
min (2+.k8s.io.api.core.v1.LimitRangeItem.MinEntryRminI
default (2/.k8s.io.api.core.v1.LimitRangeItem.DefaultEntryRdefault^
defaultRequest (26.k8s.io.api.core.v1.LimitRangeItem.DefaultRequestEntryRdefaultRequestp
maxLimitRequestRatio (2<.k8s.io.api.core.v1.LimitRangeItem.MaxLimitRequestRatioEntryRmaxLimitRequestRatiof
MaxEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8f
MinEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8j
DefaultEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8q
DefaultRequestEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8w
MaxLimitRequestRatioEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"í
LimitRangeListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.k8s.io.api.core.v1.LimitRangeRitems"L
LimitRangeSpec:
limits (2".k8s.io.api.core.v1.LimitRangeItemRlimits"h
LinuxContainerUser
uid (Ruid
gid (Rgid.
supplementalGroups (RsupplementalGroups"ó
ListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataC
items (2-.k8s.io.apimachinery.pkg.runtime.RawExtensionRitems"è
LoadBalancerIngress
ip (	Rip
hostname (	Rhostname
ipMode (	RipMode4
ports (2.k8s.io.api.core.v1.PortStatusRports"W
LoadBalancerStatusA
ingress (2'.k8s.io.api.core.v1.LoadBalancerIngressRingress"*
LocalObjectReference
name (	Rname"?
LocalVolumeSource
path (	Rpath
fsType (	RfsType"v
ModifyVolumeStatusH
targetVolumeAttributesClassName (	RtargetVolumeAttributesClassName
status (	Rstatus"Y
NFSVolumeSource
server (	Rserver
path (	Rpath
readOnly (RreadOnly"Õ
	NamespaceL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata5
spec (2!.k8s.io.api.core.v1.NamespaceSpecRspec;
status (2#.k8s.io.api.core.v1.NamespaceStatusRstatus"Œ
NamespaceCondition
type (	Rtype
status (	RstatusZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ê
NamespaceListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata3
items (2.k8s.io.api.core.v1.NamespaceRitems"/
NamespaceSpec

finalizers (	R
finalizers"o
NamespaceStatus
phase (	RphaseF

conditions (2&.k8s.io.api.core.v1.NamespaceConditionR
conditions"æ
NodeL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata0
spec (2.k8s.io.api.core.v1.NodeSpecRspec6
status (2.k8s.io.api.core.v1.NodeStatusRstatus";
NodeAddress
type (	Rtype
address (	Raddress"±
NodeAffinityà
.requiredDuringSchedulingIgnoredDuringExecution (2 .k8s.io.api.core.v1.NodeSelectorR.requiredDuringSchedulingIgnoredDuringExecutionï
/preferredDuringSchedulingIgnoredDuringExecution (2+.k8s.io.api.core.v1.PreferredSchedulingTermR/preferredDuringSchedulingIgnoredDuringExecution"Ä
NodeAllocatableMappedResources
name (	RnameJ
quantity (2..k8s.io.apimachinery.pkg.api.resource.QuantityRquantity"“
 NodeAllocatableOverheadResources
name (	RnameF
perPod (2..k8s.io.apimachinery.pkg.api.resource.QuantityRperPodR
perContainer (2..k8s.io.apimachinery.pkg.api.resource.QuantityRperContainer"í
"NodeAllocatableResourceClaimStatus,
resourceClaimName (	RresourceClaimName

containers (	R
containersL
mapping (22.k8s.io.api.core.v1.NodeAllocatableMappedResourcesRmappingP
overhead (24.k8s.io.api.core.v1.NodeAllocatableOverheadResourcesRoverhead"£
NodeCondition
type (	Rtype
status (	RstatusX
lastHeartbeatTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastHeartbeatTimeZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"_
NodeConfigSourceK
	configMap (2-.k8s.io.api.core.v1.ConfigMapNodeConfigSourceR	configMap"Ù
NodeConfigStatus@
assigned (2$.k8s.io.api.core.v1.NodeConfigSourceRassigned<
active (2$.k8s.io.api.core.v1.NodeConfigSourceRactiveJ
lastKnownGood (2$.k8s.io.api.core.v1.NodeConfigSourceRlastKnownGood
error (	Rerror"c
NodeDaemonEndpointsL
kubeletEndpoint (2".k8s.io.api.core.v1.DaemonEndpointRkubeletEndpoint"J
NodeFeatures:
supplementalGroupsPolicy (RsupplementalGroupsPolicy"Ü
NodeListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata.
items (2.k8s.io.api.core.v1.NodeRitems"S
NodePodPreemptionPolicy8
disableResizePreemption (	RdisableResizePreemption"&
NodeProxyOptions
path (	Rpath"t
NodeRuntimeHandler
name (	RnameJ
features (2..k8s.io.api.core.v1.NodeRuntimeHandlerFeaturesRfeatures"~
NodeRuntimeHandlerFeatures8
recursiveReadOnlyMounts (RrecursiveReadOnlyMounts&
userNamespaces (RuserNamespaces"b
NodeSelectorR
nodeSelectorTerms (2$.k8s.io.api.core.v1.NodeSelectorTermRnodeSelectorTerms"_
NodeSelectorRequirement
key (	Rkey
operator (	Roperator
values (	Rvalues"∫
NodeSelectorTermW
matchExpressions (2+.k8s.io.api.core.v1.NodeSelectorRequirementRmatchExpressionsM
matchFields (2+.k8s.io.api.core.v1.NodeSelectorRequirementRmatchFields"Ç
NodeSpec
podCIDR (	RpodCIDR
podCIDRs (	RpodCIDRs

providerID (	R
providerID$
unschedulable (Runschedulable1
taints (2.k8s.io.api.core.v1.TaintRtaintsH
configSource (2$.k8s.io.api.core.v1.NodeConfigSourceRconfigSource

externalID (	R
externalID]
podPreemptionPolicy (2+.k8s.io.api.core.v1.NodePodPreemptionPolicyRpodPreemptionPolicy"Ÿ

NodeStatusH
capacity (2,.k8s.io.api.core.v1.NodeStatus.CapacityEntryRcapacityQ
allocatable (2/.k8s.io.api.core.v1.NodeStatus.AllocatableEntryRallocatable
phase (	RphaseA

conditions (2!.k8s.io.api.core.v1.NodeConditionR
conditions=
	addresses (2.k8s.io.api.core.v1.NodeAddressR	addressesQ
daemonEndpoints (2'.k8s.io.api.core.v1.NodeDaemonEndpointsRdaemonEndpoints>
nodeInfo (2".k8s.io.api.core.v1.NodeSystemInfoRnodeInfo:
images (2".k8s.io.api.core.v1.ContainerImageRimages"
volumesInUse	 (	RvolumesInUseL
volumesAttached
 (2".k8s.io.api.core.v1.AttachedVolumeRvolumesAttached<
config (2$.k8s.io.api.core.v1.NodeConfigStatusRconfigP
runtimeHandlers (2&.k8s.io.api.core.v1.NodeRuntimeHandlerRruntimeHandlers<
features (2 .k8s.io.api.core.v1.NodeFeaturesRfeatures*
declaredFeatures (	RdeclaredFeaturesk
CapacityEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8n
AllocatableEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8",
NodeSwapStatus
capacity (Rcapacity"Ú
NodeSystemInfo
	machineID (	R	machineID

systemUUID (	R
systemUUID
bootID (	RbootID$
kernelVersion (	RkernelVersion
osImage (	RosImage8
containerRuntimeVersion (	RcontainerRuntimeVersion&
kubeletVersion (	RkubeletVersion*
kubeProxyVersion (	RkubeProxyVersion(
operatingSystem	 (	RoperatingSystem"
architecture
 (	Rarchitecture6
swap (2".k8s.io.api.core.v1.NodeSwapStatusRswap6
runningInUserNamespace (RrunningInUserNamespace"S
ObjectFieldSelector

apiVersion (	R
apiVersion
	fieldPath (	R	fieldPath"—
ObjectReference
kind (	Rkind
	namespace (	R	namespace
name (	Rname
uid (	Ruid

apiVersion (	R
apiVersion(
resourceVersion (	RresourceVersion
	fieldPath (	R	fieldPath"‚
PersistentVolumeL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata<
spec (2(.k8s.io.api.core.v1.PersistentVolumeSpecRspecB
status (2*.k8s.io.api.core.v1.PersistentVolumeStatusRstatus"Ò
PersistentVolumeClaimL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
spec (2-.k8s.io.api.core.v1.PersistentVolumeClaimSpecRspecG
status (2/.k8s.io.api.core.v1.PersistentVolumeClaimStatusRstatus"¨
PersistentVolumeClaimCondition
type (	Rtype
status (	RstatusP
lastProbeTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastProbeTimeZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"®
PersistentVolumeClaimListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata?
items (2).k8s.io.api.core.v1.PersistentVolumeClaimRitems"•
PersistentVolumeClaimSpec 
accessModes (	RaccessModesO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorL
	resources (2..k8s.io.api.core.v1.VolumeResourceRequirementsR	resources

volumeName (	R
volumeName*
storageClassName (	RstorageClassName

volumeMode (	R
volumeModeM

dataSource (2-.k8s.io.api.core.v1.TypedLocalObjectReferenceR
dataSourceN
dataSourceRef (2(.k8s.io.api.core.v1.TypedObjectReferenceRdataSourceRef<
volumeAttributesClassName	 (	RvolumeAttributesClassName"Æ
PersistentVolumeClaimStatus
phase (	Rphase 
accessModes (	RaccessModesY
capacity (2=.k8s.io.api.core.v1.PersistentVolumeClaimStatus.CapacityEntryRcapacityR

conditions (22.k8s.io.api.core.v1.PersistentVolumeClaimConditionR
conditionsw
allocatedResources (2G.k8s.io.api.core.v1.PersistentVolumeClaimStatus.AllocatedResourcesEntryRallocatedResourceså
allocatedResourceStatuses (2N.k8s.io.api.core.v1.PersistentVolumeClaimStatus.AllocatedResourceStatusesEntryRallocatedResourceStatusesJ
 currentVolumeAttributesClassName (	R currentVolumeAttributesClassNameV
modifyVolumeStatus	 (2&.k8s.io.api.core.v1.ModifyVolumeStatusRmodifyVolumeStatusJ
healthStatus
 (2&.k8s.io.api.core.v1.VolumeHealthStatusRhealthStatusk
CapacityEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8u
AllocatedResourcesEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8L
AllocatedResourceStatusesEntry
key (	Rkey
value (	Rvalue:8"∞
PersistentVolumeClaimTemplateL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
spec (2-.k8s.io.api.core.v1.PersistentVolumeClaimSpecRspec"]
!PersistentVolumeClaimVolumeSource
	claimName (	R	claimName
readOnly (RreadOnly"û
PersistentVolumeListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata:
items (2$.k8s.io.api.core.v1.PersistentVolumeRitems"©
PersistentVolumeSource_
gcePersistentDisk (21.k8s.io.api.core.v1.GCEPersistentDiskVolumeSourceRgcePersistentDiskh
awsElasticBlockStore (24.k8s.io.api.core.v1.AWSElasticBlockStoreVolumeSourceRawsElasticBlockStoreD
hostPath (2(.k8s.io.api.core.v1.HostPathVolumeSourceRhostPathQ
	glusterfs (23.k8s.io.api.core.v1.GlusterfsPersistentVolumeSourceR	glusterfs5
nfs (2#.k8s.io.api.core.v1.NFSVolumeSourceRnfs?
rbd (2-.k8s.io.api.core.v1.RBDPersistentVolumeSourceRrbdE
iscsi (2/.k8s.io.api.core.v1.ISCSIPersistentVolumeSourceRiscsiH
cinder (20.k8s.io.api.core.v1.CinderPersistentVolumeSourceRcinderH
cephfs	 (20.k8s.io.api.core.v1.CephFSPersistentVolumeSourceRcephfs2
fc
 (2".k8s.io.api.core.v1.FCVolumeSourceRfcA
flocker (2'.k8s.io.api.core.v1.FlockerVolumeSourceRflockerN

flexVolume (2..k8s.io.api.core.v1.FlexPersistentVolumeSourceR
flexVolumeQ
	azureFile (23.k8s.io.api.core.v1.AzureFilePersistentVolumeSourceR	azureFileX
vsphereVolume (22.k8s.io.api.core.v1.VsphereVirtualDiskVolumeSourceRvsphereVolumeA
quobyte (2'.k8s.io.api.core.v1.QuobyteVolumeSourceRquobyteG
	azureDisk (2).k8s.io.api.core.v1.AzureDiskVolumeSourceR	azureDiskh
photonPersistentDisk (24.k8s.io.api.core.v1.PhotonPersistentDiskVolumeSourceRphotonPersistentDiskP
portworxVolume (2(.k8s.io.api.core.v1.PortworxVolumeSourceRportworxVolumeK
scaleIO (21.k8s.io.api.core.v1.ScaleIOPersistentVolumeSourceRscaleIO;
local (2%.k8s.io.api.core.v1.LocalVolumeSourceRlocalQ
	storageos (23.k8s.io.api.core.v1.StorageOSPersistentVolumeSourceR	storageos?
csi (2-.k8s.io.api.core.v1.CSIPersistentVolumeSourceRcsi"ﬁ
PersistentVolumeSpecR
capacity (26.k8s.io.api.core.v1.PersistentVolumeSpec.CapacityEntryRcapacityb
persistentVolumeSource (2*.k8s.io.api.core.v1.PersistentVolumeSourceRpersistentVolumeSource 
accessModes (	RaccessModes?
claimRef (2#.k8s.io.api.core.v1.ObjectReferenceRclaimRefD
persistentVolumeReclaimPolicy (	RpersistentVolumeReclaimPolicy*
storageClassName (	RstorageClassName"
mountOptions (	RmountOptions

volumeMode (	R
volumeModeJ
nodeAffinity	 (2&.k8s.io.api.core.v1.VolumeNodeAffinityRnodeAffinity<
volumeAttributesClassName
 (	RvolumeAttributesClassNamek
CapacityEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"∆
PersistentVolumeStatus
phase (	Rphase
message (	Rmessage
reason (	Rreasond
lastPhaseTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastPhaseTransitionTime"N
 PhotonPersistentDiskVolumeSource
pdID (	RpdID
fsType (	RfsType"ª
PodL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata/
spec (2.k8s.io.api.core.v1.PodSpecRspec5
status (2.k8s.io.api.core.v1.PodStatusRstatus"≥
PodAffinityã
.requiredDuringSchedulingIgnoredDuringExecution (2#.k8s.io.api.core.v1.PodAffinityTermR.requiredDuringSchedulingIgnoredDuringExecutionï
/preferredDuringSchedulingIgnoredDuringExecution (2+.k8s.io.api.core.v1.WeightedPodAffinityTermR/preferredDuringSchedulingIgnoredDuringExecution"Á
PodAffinityTermY
labelSelector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRlabelSelector

namespaces (	R
namespaces 
topologyKey (	RtopologyKeya
namespaceSelector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelector&
matchLabelKeys (	RmatchLabelKeys,
mismatchLabelKeys (	RmismatchLabelKeys"∑
PodAntiAffinityã
.requiredDuringSchedulingIgnoredDuringExecution (2#.k8s.io.api.core.v1.PodAffinityTermR.requiredDuringSchedulingIgnoredDuringExecutionï
/preferredDuringSchedulingIgnoredDuringExecution (2+.k8s.io.api.core.v1.WeightedPodAffinityTermR/preferredDuringSchedulingIgnoredDuringExecution"à
PodAttachOptions
stdin (Rstdin
stdout (Rstdout
stderr (Rstderr
tty (Rtty
	container (	R	container"œ
PodCertificateProjection

signerName (	R
signerName
keyType (	RkeyType2
maxExpirationSeconds (RmaxExpirationSeconds2
credentialBundlePath (	RcredentialBundlePath
keyPath (	RkeyPath2
certificateChainPath (	RcertificateChainPathk
userAnnotations (2A.k8s.io.api.core.v1.PodCertificateProjection.UserAnnotationsEntryRuserAnnotations
user (RuserB
UserAnnotationsEntry
key (	Rkey
value (	Rvalue:8" 
PodCondition
type (	Rtype.
observedGeneration (RobservedGeneration
status (	RstatusP
lastProbeTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastProbeTimeZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"é
PodDNSConfig 
nameservers (	Rnameservers
searches (	Rsearches@
options (2&.k8s.io.api.core.v1.PodDNSConfigOptionRoptions">
PodDNSConfigOption
name (	Rname
value (	Rvalue"†
PodExecOptions
stdin (Rstdin
stdout (Rstdout
stderr (Rstderr
tty (Rtty
	container (	R	container
command (	Rcommand"Æ
PodExtendedResourceClaimStatus^
requestMappings (24.k8s.io.api.core.v1.ContainerExtendedResourceRequestRrequestMappings,
resourceClaimName (	RresourceClaimName"
PodIP
ip (	Rip"Ñ
PodListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata-
items (2.k8s.io.api.core.v1.PodRitems"â
PodLogOptions
	container (	R	container
follow (Rfollow
previous (Rprevious"
sinceSeconds (RsinceSecondsH
	sinceTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeR	sinceTime

timestamps (R
timestamps
	tailLines (R	tailLines

limitBytes (R
limitBytesB
insecureSkipTLSVerifyBackend	 (RinsecureSkipTLSVerifyBackend
stream
 (	Rstream"
PodOS
name (	Rname"-
PodPortForwardOptions
ports (Rports"%
PodProxyOptions
path (	Rpath"8
PodReadinessGate$
conditionType (	RconditionType"í
PodResourceClaim
name (	Rname,
resourceClaimName (	RresourceClaimName<
resourceClaimTemplateName (	RresourceClaimTemplateName"Z
PodResourceClaimStatus
name (	Rname,
resourceClaimName (	RresourceClaimName"'
PodSchedulingGate
name (	Rname"8
PodSchedulingGroup"
podGroupName (	RpodGroupName"ÿ
PodSecurityContextJ
seLinuxOptions (2".k8s.io.api.core.v1.SELinuxOptionsRseLinuxOptionsY
windowsOptions (21.k8s.io.api.core.v1.WindowsSecurityContextOptionsRwindowsOptions
	runAsUser (R	runAsUser

runAsGroup (R
runAsGroup"
runAsNonRoot (RrunAsNonRoot.
supplementalGroups (RsupplementalGroups:
supplementalGroupsPolicy (	RsupplementalGroupsPolicy
fsGroup (RfsGroup4
sysctls (2.k8s.io.api.core.v1.SysctlRsysctls0
fsGroupChangePolicy	 (	RfsGroupChangePolicyJ
seccompProfile
 (2".k8s.io.api.core.v1.SeccompProfileRseccompProfileM
appArmorProfile (2#.k8s.io.api.core.v1.AppArmorProfileRappArmorProfile0
seLinuxChangePolicy (	RseLinuxChangePolicy"j
PodSignatureZ
podController (24.k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReferenceRpodController"Ø
PodSpec4
volumes (2.k8s.io.api.core.v1.VolumeRvolumesE
initContainers (2.k8s.io.api.core.v1.ContainerRinitContainers=

containers (2.k8s.io.api.core.v1.ContainerR
containersX
ephemeralContainers" (2&.k8s.io.api.core.v1.EphemeralContainerRephemeralContainers$
restartPolicy (	RrestartPolicyD
terminationGracePeriodSeconds (RterminationGracePeriodSeconds4
activeDeadlineSeconds (RactiveDeadlineSeconds
	dnsPolicy (	R	dnsPolicyQ
nodeSelector (2-.k8s.io.api.core.v1.PodSpec.NodeSelectorEntryRnodeSelector.
serviceAccountName (	RserviceAccountName&
serviceAccount	 (	RserviceAccountB
automountServiceAccountToken (RautomountServiceAccountToken
nodeName
 (	RnodeName 
hostNetwork (RhostNetwork
hostPID (RhostPID
hostIPC (RhostIPC4
shareProcessNamespace (RshareProcessNamespaceP
securityContext (2&.k8s.io.api.core.v1.PodSecurityContextRsecurityContextT
imagePullSecrets (2(.k8s.io.api.core.v1.LocalObjectReferenceRimagePullSecrets
hostname (	Rhostname
	subdomain (	R	subdomain8
affinity (2.k8s.io.api.core.v1.AffinityRaffinity$
schedulerName (	RschedulerName@
tolerations (2.k8s.io.api.core.v1.TolerationRtolerations?
hostAliases (2.k8s.io.api.core.v1.HostAliasRhostAliases,
priorityClassName (	RpriorityClassName
priority (Rpriority>
	dnsConfig (2 .k8s.io.api.core.v1.PodDNSConfigR	dnsConfigL
readinessGates (2$.k8s.io.api.core.v1.PodReadinessGateRreadinessGates*
runtimeClassName (	RruntimeClassName.
enableServiceLinks (RenableServiceLinks*
preemptionPolicy (	RpreemptionPolicyE
overhead  (2).k8s.io.api.core.v1.PodSpec.OverheadEntryRoverheadj
topologySpreadConstraints! (2,.k8s.io.api.core.v1.TopologySpreadConstraintRtopologySpreadConstraints,
setHostnameAsFQDN# (RsetHostnameAsFQDN)
os$ (2.k8s.io.api.core.v1.PodOSRos
	hostUsers% (R	hostUsersO
schedulingGates& (2%.k8s.io.api.core.v1.PodSchedulingGateRschedulingGatesL
resourceClaims' (2$.k8s.io.api.core.v1.PodResourceClaimRresourceClaimsF
	resources( (2(.k8s.io.api.core.v1.ResourceRequirementsR	resources*
hostnameOverride) (	RhostnameOverrideP
schedulingGroup+ (2&.k8s.io.api.core.v1.PodSchedulingGroupRschedulingGroupU
evictionResponders, (2%.k8s.io.api.core.v1.EvictionResponderRevictionResponders?
NodeSelectorEntry
key (	Rkey
value (	Rvalue:8k
OverheadEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"Ô
	PodStatus.
observedGeneration (RobservedGeneration
phase (	Rphase@

conditions (2 .k8s.io.api.core.v1.PodConditionR
conditions
message (	Rmessage
reason (	Rreason,
nominatedNodeName (	RnominatedNodeName
hostIP (	RhostIP4
hostIPs (2.k8s.io.api.core.v1.HostIPRhostIPs
podIP (	RpodIP1
podIPs (2.k8s.io.api.core.v1.PodIPRpodIPsH
	startTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeR	startTimeY
initContainerStatuses
 (2#.k8s.io.api.core.v1.ContainerStatusRinitContainerStatusesQ
containerStatuses (2#.k8s.io.api.core.v1.ContainerStatusRcontainerStatuses
qosClass	 (	RqosClassc
ephemeralContainerStatuses (2#.k8s.io.api.core.v1.ContainerStatusRephemeralContainerStatuses
resize (	Rresize`
resourceClaimStatuses (2*.k8s.io.api.core.v1.PodResourceClaimStatusRresourceClaimStatusest
extendedResourceClaimStatus (22.k8s.io.api.core.v1.PodExtendedResourceClaimStatusRextendedResourceClaimStatuse
allocatedResources (25.k8s.io.api.core.v1.PodStatus.AllocatedResourcesEntryRallocatedResourcesF
	resources (2(.k8s.io.api.core.v1.ResourceRequirementsR	resourcesä
$nodeAllocatableResourceClaimStatuses (26.k8s.io.api.core.v1.NodeAllocatableResourceClaimStatusR$nodeAllocatableResourceClaimStatusesG
volumeHealth (2#.k8s.io.api.core.v1.PodVolumeHealthRvolumeHealthu
AllocatedResourcesEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"ú
PodTemplateL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata?
template (2#.k8s.io.api.core.v1.PodTemplateSpecRtemplate"î
PodTemplateListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.k8s.io.api.core.v1.PodTemplateRitems"ê
PodTemplateSpecL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata/
spec (2.k8s.io.api.core.v1.PodSpecRspec"ÿ
PodVolumeHealth
name (	RnameU
healthConditions (2).k8s.io.api.core.v1.VolumeHealthConditionRhealthConditionsZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime"R

PortStatus
port (Rport
protocol (	Rprotocol
error (	Rerror"f
PortworxVolumeSource
volumeID (	RvolumeID
fsType (	RfsType
readOnly (RreadOnly"!
Preconditions
uid (	Ruid"ﬁ
PreferAvoidPodsEntryD
podSignature (2 .k8s.io.api.core.v1.PodSignatureRpodSignatureN
evictionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRevictionTime
reason (	Rreason
message (	Rmessage"w
PreferredSchedulingTerm
weight (RweightD

preference (2$.k8s.io.api.core.v1.NodeSelectorTermR
preference"·
Probe:
handler (2 .k8s.io.api.core.v1.ProbeHandlerRhandler0
initialDelaySeconds (RinitialDelaySeconds&
timeoutSeconds (RtimeoutSeconds$
periodSeconds (RperiodSeconds*
successThreshold (RsuccessThreshold*
failureThreshold (RfailureThresholdD
terminationGracePeriodSeconds (RterminationGracePeriodSeconds"ˆ
ProbeHandler2
exec (2.k8s.io.api.core.v1.ExecActionRexec;
httpGet (2!.k8s.io.api.core.v1.HTTPGetActionRhttpGetA
	tcpSocket (2#.k8s.io.api.core.v1.TCPSocketActionR	tcpSocket2
grpc (2.k8s.io.api.core.v1.GRPCActionRgrpc"õ
ProjectedVolumeSource>
sources (2$.k8s.io.api.core.v1.VolumeProjectionRsources 
defaultMode (RdefaultMode 
defaultUser (RdefaultUser"ß
QuobyteVolumeSource
registry (	Rregistry
volume (	Rvolume
readOnly (RreadOnly
user (	Ruser
group (	Rgroup
tenant (	Rtenant"Ü
RBDPersistentVolumeSource
monitors (	Rmonitors
image (	Rimage
fsType (	RfsType
pool (	Rpool
user (	Ruser
keyring (	RkeyringA
	secretRef (2#.k8s.io.api.core.v1.SecretReferenceR	secretRef
readOnly (RreadOnly"Å
RBDVolumeSource
monitors (	Rmonitors
image (	Rimage
fsType (	RfsType
pool (	Rpool
user (	Ruser
keyring (	RkeyringF
	secretRef (2(.k8s.io.api.core.v1.LocalObjectReferenceR	secretRef
readOnly (RreadOnly"â
RangeAllocationL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
range (	Rrange
data (Rdata"Ò
ReplicationControllerL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
spec (2-.k8s.io.api.core.v1.ReplicationControllerSpecRspecG
status (2/.k8s.io.api.core.v1.ReplicationControllerStatusRstatus"⁄
ReplicationControllerCondition
type (	Rtype
status (	RstatusZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"®
ReplicationControllerListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata?
items (2).k8s.io.api.core.v1.ReplicationControllerRitems"∏
ReplicationControllerSpec
replicas (Rreplicas(
minReadySeconds (RminReadySecondsW
selector (2;.k8s.io.api.core.v1.ReplicationControllerSpec.SelectorEntryRselector?
template (2#.k8s.io.api.core.v1.PodTemplateSpecRtemplate;
SelectorEntry
key (	Rkey
value (	Rvalue:8"≈
ReplicationControllerStatus
replicas (Rreplicas2
fullyLabeledReplicas (RfullyLabeledReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas.
observedGeneration (RobservedGenerationR

conditions (22.k8s.io.api.core.v1.ReplicationControllerConditionR
conditions"=
ResourceClaim
name (	Rname
request (	Rrequest"£
ResourceFieldSelector$
containerName (	RcontainerName
resource (	RresourceH
divisor (2..k8s.io.apimachinery.pkg.api.resource.QuantityRdivisor"b
ResourceHealth

resourceID (	R
resourceID
health (	Rhealth
message (	Rmessage"Ÿ
ResourceQuotaL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata9
spec (2%.k8s.io.api.core.v1.ResourceQuotaSpecRspec?
status (2'.k8s.io.api.core.v1.ResourceQuotaStatusRstatus"ò
ResourceQuotaListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata7
items (2!.k8s.io.api.core.v1.ResourceQuotaRitems"¢
ResourceQuotaSpecC
hard (2/.k8s.io.api.core.v1.ResourceQuotaSpec.HardEntryRhard
scopes (	RscopesG
scopeSelector (2!.k8s.io.api.core.v1.ScopeSelectorRscopeSelectorg
	HardEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"ı
ResourceQuotaStatusE
hard (21.k8s.io.api.core.v1.ResourceQuotaStatus.HardEntryRhardE
used (21.k8s.io.api.core.v1.ResourceQuotaStatus.UsedEntryRusedg
	HardEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8g
	UsedEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"À
ResourceRequirementsL
limits (24.k8s.io.api.core.v1.ResourceRequirements.LimitsEntryRlimitsR
requests (26.k8s.io.api.core.v1.ResourceRequirements.RequestsEntryRrequests9
claims (2!.k8s.io.api.core.v1.ResourceClaimRclaimsi
LimitsEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8k
RequestsEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"f
ResourceStatus
name (	Rname@
	resources (2".k8s.io.api.core.v1.ResourceHealthR	resources"b
SELinuxOptions
user (	Ruser
role (	Rrole
type (	Rtype
level (	Rlevel"¯
ScaleIOPersistentVolumeSource
gateway (	Rgateway
system (	RsystemA
	secretRef (2#.k8s.io.api.core.v1.SecretReferenceR	secretRef

sslEnabled (R
sslEnabled*
protectionDomain (	RprotectionDomain 
storagePool (	RstoragePool 
storageMode (	RstorageMode

volumeName (	R
volumeName
fsType	 (	RfsType
readOnly
 (RreadOnly"Û
ScaleIOVolumeSource
gateway (	Rgateway
system (	RsystemF
	secretRef (2(.k8s.io.api.core.v1.LocalObjectReferenceR	secretRef

sslEnabled (R
sslEnabled*
protectionDomain (	RprotectionDomain 
storagePool (	RstoragePool 
storageMode (	RstorageMode

volumeName (	R
volumeName
fsType	 (	RfsType
readOnly
 (RreadOnly"r
ScopeSelectora
matchExpressions (25.k8s.io.api.core.v1.ScopedResourceSelectorRequirementRmatchExpressions"u
!ScopedResourceSelectorRequirement
	scopeName (	R	scopeName
operator (	Roperator
values (	Rvalues"P
SeccompProfile
type (	Rtype*
localhostProfile (	RlocalhostProfile"Ü
SecretL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
	immutable (R	immutable8
data (2$.k8s.io.api.core.v1.Secret.DataEntryRdataJ

stringData (2*.k8s.io.api.core.v1.Secret.StringDataEntryR
stringData
type (	Rtype7
	DataEntry
key (	Rkey
value (Rvalue:8=
StringDataEntry
key (	Rkey
value (	Rvalue:8"ã
SecretEnvSource\
localObjectReference (2(.k8s.io.api.core.v1.LocalObjectReferenceRlocalObjectReference
optional (Roptional"ü
SecretKeySelector\
localObjectReference (2(.k8s.io.api.core.v1.LocalObjectReferenceRlocalObjectReference
key (	Rkey
optional (Roptional"ä

SecretListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata0
items (2.k8s.io.api.core.v1.SecretRitems"¡
SecretProjection\
localObjectReference (2(.k8s.io.api.core.v1.LocalObjectReferenceRlocalObjectReference3
items (2.k8s.io.api.core.v1.KeyToPathRitems
optional (Roptional"C
SecretReference
name (	Rname
	namespace (	R	namespace"…
SecretVolumeSource

secretName (	R
secretName3
items (2.k8s.io.api.core.v1.KeyToPathRitems 
defaultMode (RdefaultMode
optional (Roptional 
defaultUser (RdefaultUser"≠
SecurityContextD
capabilities (2 .k8s.io.api.core.v1.CapabilitiesRcapabilities

privileged (R
privilegedJ
seLinuxOptions (2".k8s.io.api.core.v1.SELinuxOptionsRseLinuxOptionsY
windowsOptions
 (21.k8s.io.api.core.v1.WindowsSecurityContextOptionsRwindowsOptions
	runAsUser (R	runAsUser

runAsGroup (R
runAsGroup"
runAsNonRoot (RrunAsNonRoot6
readOnlyRootFilesystem (RreadOnlyRootFilesystem:
allowPrivilegeEscalation (RallowPrivilegeEscalation
	procMount	 (	R	procMountJ
seccompProfile (2".k8s.io.api.core.v1.SeccompProfileRseccompProfileM
appArmorProfile (2#.k8s.io.api.core.v1.AppArmorProfileRappArmorProfile"X
SerializedReferenceA
	reference (2#.k8s.io.api.core.v1.ObjectReferenceR	reference"«
ServiceL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata3
spec (2.k8s.io.api.core.v1.ServiceSpecRspec9
status (2!.k8s.io.api.core.v1.ServiceStatusRstatus"∑
ServiceAccountL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata=
secrets (2#.k8s.io.api.core.v1.ObjectReferenceRsecretsT
imagePullSecrets (2(.k8s.io.api.core.v1.LocalObjectReferenceRimagePullSecretsB
automountServiceAccountToken (RautomountServiceAccountToken"ö
ServiceAccountListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata8
items (2".k8s.io.api.core.v1.ServiceAccountRitems"ë
ServiceAccountTokenProjection
audience (	Raudience,
expirationSeconds (RexpirationSeconds
path (	Rpath
user (Ruser"å
ServiceListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata1
items (2.k8s.io.api.core.v1.ServiceRitems"·
ServicePort
name (	Rname
protocol (	Rprotocol 
appProtocol (	RappProtocol
port (RportP

targetPort (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringR
targetPort
nodePort (RnodePort")
ServiceProxyOptions
path (	Rpath"õ
ServiceSpec5
ports (2.k8s.io.api.core.v1.ServicePortRportsI
selector (2-.k8s.io.api.core.v1.ServiceSpec.SelectorEntryRselector
	clusterIP (	R	clusterIP

clusterIPs (	R
clusterIPs
type (	Rtype 
externalIPs (	RexternalIPs(
sessionAffinity (	RsessionAffinity&
loadBalancerIP (	RloadBalancerIP:
loadBalancerSourceRanges	 (	RloadBalancerSourceRanges"
externalName
 (	RexternalName4
externalTrafficPolicy (	RexternalTrafficPolicy0
healthCheckNodePort (RhealthCheckNodePort:
publishNotReadyAddresses (RpublishNotReadyAddresses_
sessionAffinityConfig (2).k8s.io.api.core.v1.SessionAffinityConfigRsessionAffinityConfig

ipFamilies (	R
ipFamilies&
ipFamilyPolicy (	RipFamilyPolicyD
allocateLoadBalancerNodePorts (RallocateLoadBalancerNodePorts,
loadBalancerClass (	RloadBalancerClass4
internalTrafficPolicy (	RinternalTrafficPolicy0
trafficDistribution (	RtrafficDistribution;
SelectorEntry
key (	Rkey
value (	Rvalue:8"¨
ServiceStatusJ
loadBalancer (2&.k8s.io.api.core.v1.LoadBalancerStatusRloadBalancerO

conditions (2/.k8s.io.apimachinery.pkg.apis.meta.v1.ConditionR
conditions"W
SessionAffinityConfig>
clientIP (2".k8s.io.api.core.v1.ClientIPConfigRclientIP"'
SleepAction
seconds (Rseconds"‚
StorageOSPersistentVolumeSource

volumeName (	R
volumeName(
volumeNamespace (	RvolumeNamespace
fsType (	RfsType
readOnly (RreadOnlyA
	secretRef (2#.k8s.io.api.core.v1.ObjectReferenceR	secretRef"›
StorageOSVolumeSource

volumeName (	R
volumeName(
volumeNamespace (	RvolumeNamespace
fsType (	RfsType
readOnly (RreadOnlyF
	secretRef (2(.k8s.io.api.core.v1.LocalObjectReferenceR	secretRef"2
Sysctl
name (	Rname
value (	Rvalue"k
TCPSocketActionD
port (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringRport
host (	Rhost"ë
Taint
key (	Rkey
value (	Rvalue
effect (	ReffectH
	timeAdded (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeR	timeAdded"ñ

Toleration
key (	Rkey
operator (	Roperator
value (	Rvalue
effect (	Reffect,
tolerationSeconds (RtolerationSeconds"L
 TopologySelectorLabelRequirement
key (	Rkey
values (	Rvalues"Ç
TopologySelectorTermj
matchLabelExpressions (24.k8s.io.api.core.v1.TopologySelectorLabelRequirementRmatchLabelExpressions"É
TopologySpreadConstraint
maxSkew (RmaxSkew 
topologyKey (	RtopologyKey,
whenUnsatisfiable (	RwhenUnsatisfiableY
labelSelector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRlabelSelector

minDomains (R
minDomains.
nodeAffinityPolicy (	RnodeAffinityPolicy*
nodeTaintsPolicy (	RnodeTaintsPolicy&
matchLabelKeys (	RmatchLabelKeys"_
TypedLocalObjectReference
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname"x
TypedObjectReference
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname
	namespace (	R	namespace"b
Volume
name (	RnameD
volumeSource (2 .k8s.io.api.core.v1.VolumeSourceRvolumeSource"B
VolumeDevice
name (	Rname

devicePath (	R
devicePath"a
VolumeHealthCondition
status (	Rstatus
reason (	Rreason
message (	Rmessage"«
VolumeHealthStatusU
healthConditions (2).k8s.io.api.core.v1.VolumeHealthConditionRhealthConditionsZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime"ù
VolumeMount
name (	Rname
readOnly (RreadOnly,
recursiveReadOnly (	RrecursiveReadOnly
	mountPath (	R	mountPath
subPath (	RsubPath*
mountPropagation (	RmountPropagation 
subPathExpr (	RsubPathExpr*
bindMountOptions (	RbindMountOptions"’
VolumeMountStatus
name (	Rname
	mountPath (	R	mountPath
readOnly (RreadOnly,
recursiveReadOnly (	RrecursiveReadOnlyD
volumeStatus (2 .k8s.io.api.core.v1.VolumeStatusRvolumeStatus"R
VolumeNodeAffinity<
required (2 .k8s.io.api.core.v1.NodeSelectorRrequired"Å
VolumeProjection<
secret (2$.k8s.io.api.core.v1.SecretProjectionRsecretK
downwardAPI (2).k8s.io.api.core.v1.DownwardAPIProjectionRdownwardAPIE
	configMap (2'.k8s.io.api.core.v1.ConfigMapProjectionR	configMapc
serviceAccountToken (21.k8s.io.api.core.v1.ServiceAccountTokenProjectionRserviceAccountToken`
clusterTrustBundle (20.k8s.io.api.core.v1.ClusterTrustBundleProjectionRclusterTrustBundleT
podCertificate (2,.k8s.io.api.core.v1.PodCertificateProjectionRpodCertificate"¢
VolumeResourceRequirementsR
limits (2:.k8s.io.api.core.v1.VolumeResourceRequirements.LimitsEntryRlimitsX
requests (2<.k8s.io.api.core.v1.VolumeResourceRequirements.RequestsEntryRrequestsi
LimitsEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8k
RequestsEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"õ
VolumeSourceD
hostPath (2(.k8s.io.api.core.v1.HostPathVolumeSourceRhostPathD
emptyDir (2(.k8s.io.api.core.v1.EmptyDirVolumeSourceRemptyDir_
gcePersistentDisk (21.k8s.io.api.core.v1.GCEPersistentDiskVolumeSourceRgcePersistentDiskh
awsElasticBlockStore (24.k8s.io.api.core.v1.AWSElasticBlockStoreVolumeSourceRawsElasticBlockStoreA
gitRepo (2'.k8s.io.api.core.v1.GitRepoVolumeSourceRgitRepo>
secret (2&.k8s.io.api.core.v1.SecretVolumeSourceRsecret5
nfs (2#.k8s.io.api.core.v1.NFSVolumeSourceRnfs;
iscsi (2%.k8s.io.api.core.v1.ISCSIVolumeSourceRiscsiG
	glusterfs	 (2).k8s.io.api.core.v1.GlusterfsVolumeSourceR	glusterfsk
persistentVolumeClaim
 (25.k8s.io.api.core.v1.PersistentVolumeClaimVolumeSourceRpersistentVolumeClaim5
rbd (2#.k8s.io.api.core.v1.RBDVolumeSourceRrbdD

flexVolume (2$.k8s.io.api.core.v1.FlexVolumeSourceR
flexVolume>
cinder (2&.k8s.io.api.core.v1.CinderVolumeSourceRcinder>
cephfs (2&.k8s.io.api.core.v1.CephFSVolumeSourceRcephfsA
flocker (2'.k8s.io.api.core.v1.FlockerVolumeSourceRflockerM
downwardAPI (2+.k8s.io.api.core.v1.DownwardAPIVolumeSourceRdownwardAPI2
fc (2".k8s.io.api.core.v1.FCVolumeSourceRfcG
	azureFile (2).k8s.io.api.core.v1.AzureFileVolumeSourceR	azureFileG
	configMap (2).k8s.io.api.core.v1.ConfigMapVolumeSourceR	configMapX
vsphereVolume (22.k8s.io.api.core.v1.VsphereVirtualDiskVolumeSourceRvsphereVolumeA
quobyte (2'.k8s.io.api.core.v1.QuobyteVolumeSourceRquobyteG
	azureDisk (2).k8s.io.api.core.v1.AzureDiskVolumeSourceR	azureDiskh
photonPersistentDisk (24.k8s.io.api.core.v1.PhotonPersistentDiskVolumeSourceRphotonPersistentDiskG
	projected (2).k8s.io.api.core.v1.ProjectedVolumeSourceR	projectedP
portworxVolume (2(.k8s.io.api.core.v1.PortworxVolumeSourceRportworxVolumeA
scaleIO (2'.k8s.io.api.core.v1.ScaleIOVolumeSourceRscaleIOG
	storageos (2).k8s.io.api.core.v1.StorageOSVolumeSourceR	storageos5
csi (2#.k8s.io.api.core.v1.CSIVolumeSourceRcsiG
	ephemeral (2).k8s.io.api.core.v1.EphemeralVolumeSourceR	ephemeral;
image (2%.k8s.io.api.core.v1.ImageVolumeSourceRimage"K
VolumeStatus;
image (2%.k8s.io.api.core.v1.ImageVolumeStatusRimage"∞
VsphereVirtualDiskVolumeSource

volumePath (	R
volumePath
fsType (	RfsType,
storagePolicyName (	RstoragePolicyName(
storagePolicyID (	RstoragePolicyID"Ä
WeightedPodAffinityTerm
weight (RweightM
podAffinityTerm (2#.k8s.io.api.core.v1.PodAffinityTermRpodAffinityTerm"œ
WindowsSecurityContextOptions6
gmsaCredentialSpecName (	RgmsaCredentialSpecName.
gmsaCredentialSpec (	RgmsaCredentialSpec$
runAsUserName (	RrunAsUserName 
hostProcess (RhostProcessBZk8s.io/api/core/v1
©<
"k8s.io/api/apps/v1/generated.protok8s.io.api.apps.v1"k8s.io/api/core/v1/generated.proto4k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto3k8s.io/apimachinery/pkg/util/intstr/generated.proto"¡
ControllerRevisionL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
data (2-.k8s.io.apimachinery.pkg.runtime.RawExtensionRdata
revision (Rrevision"¢
ControllerRevisionListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata<
items (2&.k8s.io.api.apps.v1.ControllerRevisionRitems"Õ
	DaemonSetL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata5
spec (2!.k8s.io.api.apps.v1.DaemonSetSpecRspec;
status (2#.k8s.io.api.apps.v1.DaemonSetStatusRstatus"Œ
DaemonSetCondition
type (	Rtype
status (	RstatusZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ê
DaemonSetListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata3
items (2.k8s.io.api.apps.v1.DaemonSetRitems"‘
DaemonSetSpecO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector?
template (2#.k8s.io.api.core.v1.PodTemplateSpecRtemplateS
updateStrategy (2+.k8s.io.api.apps.v1.DaemonSetUpdateStrategyRupdateStrategy(
minReadySeconds (RminReadySeconds2
revisionHistoryLimit (RrevisionHistoryLimit"É
DaemonSetStatus6
currentNumberScheduled (RcurrentNumberScheduled.
numberMisscheduled (RnumberMisscheduled6
desiredNumberScheduled (RdesiredNumberScheduled 
numberReady (RnumberReady.
observedGeneration (RobservedGeneration6
updatedNumberScheduled (RupdatedNumberScheduled(
numberAvailable (RnumberAvailable,
numberUnavailable (RnumberUnavailable&
collisionCount	 (RcollisionCountF

conditions
 (2&.k8s.io.api.apps.v1.DaemonSetConditionR
conditions"
DaemonSetUpdateStrategy
type (	RtypeP
rollingUpdate (2*.k8s.io.api.apps.v1.RollingUpdateDaemonSetRrollingUpdate"–

DeploymentL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
spec (2".k8s.io.api.apps.v1.DeploymentSpecRspec<
status (2$.k8s.io.api.apps.v1.DeploymentStatusRstatus"£
DeploymentCondition
type (	Rtype
status (	RstatusR
lastUpdateTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastUpdateTimeZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"í
DeploymentListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.k8s.io.api.apps.v1.DeploymentRitems"≤
DeploymentSpec
replicas (RreplicasO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector?
template (2#.k8s.io.api.core.v1.PodTemplateSpecRtemplateB
strategy (2&.k8s.io.api.apps.v1.DeploymentStrategyRstrategy(
minReadySeconds (RminReadySeconds2
revisionHistoryLimit (RrevisionHistoryLimit
paused (Rpaused8
progressDeadlineSeconds	 (RprogressDeadlineSeconds"±
DeploymentStatus.
observedGeneration (RobservedGeneration
replicas (Rreplicas(
updatedReplicas (RupdatedReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas0
unavailableReplicas (RunavailableReplicas0
terminatingReplicas	 (RterminatingReplicasG

conditions (2'.k8s.io.api.apps.v1.DeploymentConditionR
conditions&
collisionCount (RcollisionCount"{
DeploymentStrategy
type (	RtypeQ
rollingUpdate (2+.k8s.io.api.apps.v1.RollingUpdateDeploymentRrollingUpdate"–

ReplicaSetL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
spec (2".k8s.io.api.apps.v1.ReplicaSetSpecRspec<
status (2$.k8s.io.api.apps.v1.ReplicaSetStatusRstatus"œ
ReplicaSetCondition
type (	Rtype
status (	RstatusZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"í
ReplicaSetListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.k8s.io.api.apps.v1.ReplicaSetRitems"Ë
ReplicaSetSpec
replicas (Rreplicas(
minReadySeconds (RminReadySecondsO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector?
template (2#.k8s.io.api.core.v1.PodTemplateSpecRtemplate"·
ReplicaSetStatus
replicas (Rreplicas2
fullyLabeledReplicas (RfullyLabeledReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas0
terminatingReplicas (RterminatingReplicas.
observedGeneration (RobservedGenerationG

conditions (2'.k8s.io.api.apps.v1.ReplicaSetConditionR
conditions"¿
RollingUpdateDaemonSetX
maxUnavailable (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailableL
maxSurge (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringRmaxSurge"¡
RollingUpdateDeploymentX
maxUnavailable (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailableL
maxSurge (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringRmaxSurge"ö
 RollingUpdateStatefulSetStrategy
	partition (R	partitionX
maxUnavailable (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailable"”
StatefulSetL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata7
spec (2#.k8s.io.api.apps.v1.StatefulSetSpecRspec=
status (2%.k8s.io.api.apps.v1.StatefulSetStatusRstatus"–
StatefulSetCondition
type (	Rtype
status (	RstatusZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"î
StatefulSetListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.k8s.io.api.apps.v1.StatefulSetRitems"+
StatefulSetOrdinals
start (Rstart"s
/StatefulSetPersistentVolumeClaimRetentionPolicy 
whenDeleted (	RwhenDeleted

whenScaled (	R
whenScaled"Ü
StatefulSetSpec
replicas (RreplicasO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector?
template (2#.k8s.io.api.core.v1.PodTemplateSpecRtemplate]
volumeClaimTemplates (2).k8s.io.api.core.v1.PersistentVolumeClaimRvolumeClaimTemplates 
serviceName (	RserviceName0
podManagementPolicy (	RpodManagementPolicyU
updateStrategy (2-.k8s.io.api.apps.v1.StatefulSetUpdateStrategyRupdateStrategy2
revisionHistoryLimit (RrevisionHistoryLimit(
minReadySeconds	 (RminReadySecondsó
$persistentVolumeClaimRetentionPolicy
 (2C.k8s.io.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicyR$persistentVolumeClaimRetentionPolicyC
ordinals (2'.k8s.io.api.apps.v1.StatefulSetOrdinalsRordinals"À
StatefulSetStatus.
observedGeneration (RobservedGeneration
replicas (Rreplicas$
readyReplicas (RreadyReplicas(
currentReplicas (RcurrentReplicas(
updatedReplicas (RupdatedReplicas(
currentRevision (	RcurrentRevision&
updateRevision (	RupdateRevision&
collisionCount	 (RcollisionCountH

conditions
 (2(.k8s.io.api.apps.v1.StatefulSetConditionR
conditions,
availableReplicas (RavailableReplicas"ã
StatefulSetUpdateStrategy
type (	RtypeZ
rollingUpdate (24.k8s.io.api.apps.v1.RollingUpdateStatefulSetStrategyRrollingUpdateBZk8s.io/api/apps/v1
Â?
.k8s.io/api/scheduling/v1alpha3/generated.protok8s.io.api.scheduling.v1alpha34k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto"
AllCompositeDisruptionMode"
AllDisruptionMode"
BasicSchedulingPolicy" 
CompositeBasicSchedulingPolicy"æ
CompositeDisruptionModeU
single (2=.k8s.io.api.scheduling.v1alpha3.SingleCompositeDisruptionModeRsingleL
all (2:.k8s.io.api.scheduling.v1alpha3.AllCompositeDisruptionModeRall"E
CompositeGangSchedulingPolicy$
minGroupCount (RminGroupCount"˝
CompositePodGroupL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataI
spec (25.k8s.io.api.scheduling.v1alpha3.CompositePodGroupSpecRspecO
status (27.k8s.io.api.scheduling.v1alpha3.CompositePodGroupStatusRstatus"¨
CompositePodGroupListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataG
items (21.k8s.io.api.scheduling.v1alpha3.CompositePodGroupRitems"x
&CompositePodGroupSchedulingConstraintsN
topology (22.k8s.io.api.scheduling.v1alpha3.TopologyConstraintRtopology"Ã
!CompositePodGroupSchedulingPolicyT
basic (2>.k8s.io.api.scheduling.v1alpha3.CompositeBasicSchedulingPolicyRbasicQ
gang (2=.k8s.io.api.scheduling.v1alpha3.CompositeGangSchedulingPolicyRgang"Ú
CompositePodGroupSpec@
parentCompositePodGroupName (	RparentCompositePodGroupNameS
workloadRef (21.k8s.io.api.scheduling.v1alpha3.WorkloadReferenceRworkloadRefm
schedulingPolicy (2A.k8s.io.api.scheduling.v1alpha3.CompositePodGroupSchedulingPolicyRschedulingPolicy|
schedulingConstraints (2F.k8s.io.api.scheduling.v1alpha3.CompositePodGroupSchedulingConstraintsRschedulingConstraints_
disruptionMode (27.k8s.io.api.scheduling.v1alpha3.CompositeDisruptionModeRdisruptionMode,
priorityClassName (	RpriorityClassName
priority (Rpriority*
preemptionPolicy (	RpreemptionPolicy"j
CompositePodGroupStatusO

conditions (2/.k8s.io.apimachinery.pkg.apis.meta.v1.ConditionR
conditions"Œ
CompositePodGroupTemplate
name (	Rnamem
schedulingPolicy (2A.k8s.io.api.scheduling.v1alpha3.CompositePodGroupSchedulingPolicyRschedulingPolicy|
schedulingConstraints (2F.k8s.io.api.scheduling.v1alpha3.CompositePodGroupSchedulingConstraintsRschedulingConstraints_
disruptionMode (27.k8s.io.api.scheduling.v1alpha3.CompositeDisruptionModeRdisruptionMode,
priorityClassName (	RpriorityClassName
priority (Rpriority*
preemptionPolicy (	RpreemptionPolicy^
podGroupTemplates (20.k8s.io.api.scheduling.v1alpha3.PodGroupTemplateRpodGroupTemplatesy
compositePodGroupTemplates	 (29.k8s.io.api.scheduling.v1alpha3.CompositePodGroupTemplateRcompositePodGroupTemplates"£
DisruptionModeL
single (24.k8s.io.api.scheduling.v1alpha3.SingleDisruptionModeRsingleC
all (21.k8s.io.api.scheduling.v1alpha3.AllDisruptionModeRall"2
GangSchedulingPolicy
minCount (RminCount"‚
PodGroupL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata@
spec (2,.k8s.io.api.scheduling.v1alpha3.PodGroupSpecRspecF
status (2..k8s.io.api.scheduling.v1alpha3.PodGroupStatusRstatus"ö
PodGroupListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata>
items (2(.k8s.io.api.scheduling.v1alpha3.PodGroupRitems"ó
PodGroupResourceClaim
name (	Rname,
resourceClaimName (	RresourceClaimName<
resourceClaimTemplateName (	RresourceClaimTemplateName"_
PodGroupResourceClaimStatus
name (	Rname,
resourceClaimName (	RresourceClaimName"o
PodGroupSchedulingConstraintsN
topology (22.k8s.io.api.scheduling.v1alpha3.TopologyConstraintRtopology"±
PodGroupSchedulingPolicyK
basic (25.k8s.io.api.scheduling.v1alpha3.BasicSchedulingPolicyRbasicH
gang (24.k8s.io.api.scheduling.v1alpha3.GangSchedulingPolicyRgang"≠
PodGroupSpec@
parentCompositePodGroupName (	RparentCompositePodGroupNameS
workloadRef (21.k8s.io.api.scheduling.v1alpha3.WorkloadReferenceRworkloadRefd
schedulingPolicy (28.k8s.io.api.scheduling.v1alpha3.PodGroupSchedulingPolicyRschedulingPolicys
schedulingConstraints (2=.k8s.io.api.scheduling.v1alpha3.PodGroupSchedulingConstraintsRschedulingConstraints]
resourceClaims (25.k8s.io.api.scheduling.v1alpha3.PodGroupResourceClaimRresourceClaimsV
disruptionMode (2..k8s.io.api.scheduling.v1alpha3.DisruptionModeRdisruptionMode,
priorityClassName (	RpriorityClassName
priority (Rpriority*
preemptionPolicy	 (	RpreemptionPolicy"‘
PodGroupStatusO

conditions (2/.k8s.io.apimachinery.pkg.apis.meta.v1.ConditionR
conditionsq
resourceClaimStatuses (2;.k8s.io.api.scheduling.v1alpha3.PodGroupResourceClaimStatusRresourceClaimStatuses"Æ
PodGroupTemplate
name (	Rnamed
schedulingPolicy (28.k8s.io.api.scheduling.v1alpha3.PodGroupSchedulingPolicyRschedulingPolicys
schedulingConstraints (2=.k8s.io.api.scheduling.v1alpha3.PodGroupSchedulingConstraintsRschedulingConstraints]
resourceClaims (25.k8s.io.api.scheduling.v1alpha3.PodGroupResourceClaimRresourceClaimsV
disruptionMode (2..k8s.io.api.scheduling.v1alpha3.DisruptionModeRdisruptionMode,
priorityClassName (	RpriorityClassName
priority (Rpriority*
preemptionPolicy (	RpreemptionPolicy"
SingleCompositeDisruptionMode"
SingleDisruptionMode"&
TopologyConstraint
key (	Rkey"_
TypedLocalObjectReference
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname"ö
WorkloadL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata@
spec (2,.k8s.io.api.scheduling.v1alpha3.WorkloadSpecRspec",
*WorkloadCompositePodGroupAllDisruptionMode"0
.WorkloadCompositePodGroupBasicSchedulingPolicy"Ó
'WorkloadCompositePodGroupDisruptionModee
single (2M.k8s.io.api.scheduling.v1alpha3.WorkloadCompositePodGroupSingleDisruptionModeRsingle\
all (2J.k8s.io.api.scheduling.v1alpha3.WorkloadCompositePodGroupAllDisruptionModeRall"U
-WorkloadCompositePodGroupGangSchedulingPolicy$
minGroupCount (RminGroupCount"Ä
.WorkloadCompositePodGroupSchedulingConstraintsN
topology (22.k8s.io.api.scheduling.v1alpha3.TopologyConstraintRtopology"Ù
)WorkloadCompositePodGroupSchedulingPolicyd
basic (2N.k8s.io.api.scheduling.v1alpha3.WorkloadCompositePodGroupBasicSchedulingPolicyRbasica
gang (2M.k8s.io.api.scheduling.v1alpha3.WorkloadCompositePodGroupGangSchedulingPolicyRgang"/
-WorkloadCompositePodGroupSingleDisruptionMode"ö
WorkloadListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata>
items (2(.k8s.io.api.scheduling.v1alpha3.WorkloadRitems"#
!WorkloadPodGroupAllDisruptionMode"'
%WorkloadPodGroupBasicSchedulingPolicy"”
WorkloadPodGroupDisruptionMode\
single (2D.k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupSingleDisruptionModeRsingleS
all (2A.k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupAllDisruptionModeRall"B
$WorkloadPodGroupGangSchedulingPolicy
minCount (RminCount"ü
WorkloadPodGroupResourceClaim
name (	Rname,
resourceClaimName (	RresourceClaimName<
resourceClaimTemplateName (	RresourceClaimTemplateName"w
%WorkloadPodGroupSchedulingConstraintsN
topology (22.k8s.io.api.scheduling.v1alpha3.TopologyConstraintRtopology"Ÿ
 WorkloadPodGroupSchedulingPolicy[
basic (2E.k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupBasicSchedulingPolicyRbasicX
gang (2D.k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupGangSchedulingPolicyRgang"&
$WorkloadPodGroupSingleDisruptionMode"[
WorkloadReference"
workloadName (	RworkloadName"
templateName (	RtemplateName" 
WorkloadSpec_
controllerRef (29.k8s.io.api.scheduling.v1alpha3.TypedLocalObjectReferenceRcontrollerRef^
podGroupTemplates (20.k8s.io.api.scheduling.v1alpha3.PodGroupTemplateRpodGroupTemplatesy
compositePodGroupTemplates (29.k8s.io.api.scheduling.v1alpha3.CompositePodGroupTemplateRcompositePodGroupTemplatesB Zk8s.io/api/scheduling/v1alpha3
ﬁ%
#k8s.io/api/batch/v1/generated.protok8s.io.api.batch.v1"k8s.io/api/core/v1/generated.proto.k8s.io/api/scheduling/v1alpha3/generated.proto4k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto"…
CronJobL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
spec (2 .k8s.io.api.batch.v1.CronJobSpecRspec:
status (2".k8s.io.api.batch.v1.CronJobStatusRstatus"ç
CronJobListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata2
items (2.k8s.io.api.batch.v1.CronJobRitems"á
CronJobSpec
schedule (	Rschedule
timeZone (	RtimeZone8
startingDeadlineSeconds (RstartingDeadlineSeconds,
concurrencyPolicy (	RconcurrencyPolicy
suspend (RsuspendF
jobTemplate (2$.k8s.io.api.batch.v1.JobTemplateSpecRjobTemplate>
successfulJobsHistoryLimit (RsuccessfulJobsHistoryLimit6
failedJobsHistoryLimit (RfailedJobsHistoryLimit"Ä
CronJobStatus;
active (2#.k8s.io.api.core.v1.ObjectReferenceRactiveV
lastScheduleTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastScheduleTimeZ
lastSuccessfulTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastSuccessfulTime"Ω
JobL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata0
spec (2.k8s.io.api.batch.v1.JobSpecRspec6
status (2.k8s.io.api.batch.v1.JobStatusRstatus"ö
JobCondition
type (	Rtype
status (	RstatusP
lastProbeTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastProbeTimeZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"Ö
JobListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata.
items (2.k8s.io.api.batch.v1.JobRitems"÷
JobSchedulingConfigurationl
schedulingPolicy (2@.k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupSchedulingPolicyRschedulingPolicy{
schedulingConstraints (2E.k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupSchedulingConstraintsRschedulingConstraintsf
disruptionMode (2>.k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupDisruptionModeRdisruptionModee
resourceClaims (2=.k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupResourceClaimRresourceClaims"˝
JobSpec 
parallelism (Rparallelism 
completions (Rcompletions4
activeDeadlineSeconds (RactiveDeadlineSecondsQ
podFailurePolicy (2%.k8s.io.api.batch.v1.PodFailurePolicyRpodFailurePolicyH
successPolicy (2".k8s.io.api.batch.v1.SuccessPolicyRsuccessPolicy"
backoffLimit (RbackoffLimit2
backoffLimitPerIndex (RbackoffLimitPerIndex*
maxFailedIndexes (RmaxFailedIndexesO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector&
manualSelector (RmanualSelector?
template (2#.k8s.io.api.core.v1.PodTemplateSpecRtemplate8
ttlSecondsAfterFinished (RttlSecondsAfterFinished&
completionMode	 (	RcompletionMode
suspend
 (Rsuspend2
podReplacementPolicy (	RpodReplacementPolicy
	managedBy (	R	managedByO

scheduling (2/.k8s.io.api.batch.v1.JobSchedulingConfigurationR
scheduling"¨
	JobStatusA

conditions (2!.k8s.io.api.batch.v1.JobConditionR
conditionsH
	startTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeR	startTimeR
completionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRcompletionTime
active (Ractive
	succeeded (R	succeeded
failed (Rfailed 
terminating (Rterminating*
completedIndexes (	RcompletedIndexes$
failedIndexes
 (	RfailedIndexesf
uncountedTerminatedPods (2,.k8s.io.api.batch.v1.UncountedTerminatedPodsRuncountedTerminatedPods
ready	 (Rready"ë
JobTemplateSpecL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata0
spec (2.k8s.io.api.batch.v1.JobSpecRspec"S
PodFailurePolicy?
rules (2).k8s.io.api.batch.v1.PodFailurePolicyRuleRrules"Ç
&PodFailurePolicyOnExitCodesRequirement$
containerName (	RcontainerName
operator (	Roperator
values (Rvalues"T
&PodFailurePolicyOnPodConditionsPattern
type (	Rtype
status (	Rstatus"Ù
PodFailurePolicyRule
action (	Raction]
onExitCodes (2;.k8s.io.api.batch.v1.PodFailurePolicyOnExitCodesRequirementRonExitCodese
onPodConditions (2;.k8s.io.api.batch.v1.PodFailurePolicyOnPodConditionsPatternRonPodConditions"M
SuccessPolicy<
rules (2&.k8s.io.api.batch.v1.SuccessPolicyRuleRrules"g
SuccessPolicyRule*
succeededIndexes (	RsucceededIndexes&
succeededCount (RsucceededCount"O
UncountedTerminatedPods
	succeeded (	R	succeeded
failed (	RfailedBZk8s.io/api/batch/v1
Ò
$k8s.io/api/policy/v1/generated.protok8s.io.api.policy.v14k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto3k8s.io/apimachinery/pkg/util/intstr/generated.proto"≥
EvictionL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataY
deleteOptions (23.k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptionsRdeleteOptions"Ô
PodDisruptionBudgetL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
spec (2-.k8s.io.api.policy.v1.PodDisruptionBudgetSpecRspecG
status (2/.k8s.io.api.policy.v1.PodDisruptionBudgetStatusRstatus"¶
PodDisruptionBudgetListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata?
items (2).k8s.io.api.policy.v1.PodDisruptionBudgetRitems"⁄
PodDisruptionBudgetSpecT
minAvailable (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringRminAvailableO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorX
maxUnavailable (20.k8s.io.apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailable>
unhealthyPodEvictionPolicy (	RunhealthyPodEvictionPolicy"ò
PodDisruptionBudgetStatus.
observedGeneration (RobservedGenerationh
disruptedPods (2B.k8s.io.api.policy.v1.PodDisruptionBudgetStatus.DisruptedPodsEntryRdisruptedPods.
disruptionsAllowed (RdisruptionsAllowed&
currentHealthy (RcurrentHealthy&
desiredHealthy (RdesiredHealthy"
expectedPods (RexpectedPodsO

conditions (2/.k8s.io.apimachinery.pkg.apis.meta.v1.ConditionR
conditionsl
DisruptedPodsEntry
key (	Rkey@
value (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRvalue:8BZk8s.io/api/policy/v1
Ã
+k8s.io/api/authorization/v1/generated.protok8s.io.api.authorization.v14k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto""

ExtraValue
items (	Ritems"ü
FieldSelectorAttributes 
rawSelector (	RrawSelectorb
requirements (2>.k8s.io.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirementRrequirements"ü
LabelSelectorAttributes 
rawSelector (	RrawSelectorb
requirements (2>.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirementRrequirements"Ç
LocalSubjectAccessReviewL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataH
spec (24.k8s.io.api.authorization.v1.SubjectAccessReviewSpecRspecN
status (26.k8s.io.api.authorization.v1.SubjectAccessReviewStatusRstatus"?
NonResourceAttributes
path (	Rpath
verb (	Rverb"Q
NonResourceRule
verbs (	Rverbs(
nonResourceURLs (	RnonResourceURLs"Ä
ResourceAttributes
	namespace (	R	namespace
verb (	Rverb
group (	Rgroup
version (	Rversion
resource (	Rresource 
subresource (	Rsubresource
name (	RnameZ
fieldSelector (24.k8s.io.api.authorization.v1.FieldSelectorAttributesRfieldSelectorZ
labelSelector	 (24.k8s.io.api.authorization.v1.LabelSelectorAttributesRlabelSelector"Ü
ResourceRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources$
resourceNames (	RresourceNames"Ö
SelfSubjectAccessReviewL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataL
spec (28.k8s.io.api.authorization.v1.SelfSubjectAccessReviewSpecRspecN
status (26.k8s.io.api.authorization.v1.SubjectAccessReviewStatusRstatus"Ë
SelfSubjectAccessReviewSpec_
resourceAttributes (2/.k8s.io.api.authorization.v1.ResourceAttributesRresourceAttributesh
nonResourceAttributes (22.k8s.io.api.authorization.v1.NonResourceAttributesRnonResourceAttributes"Ç
SelfSubjectRulesReviewL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataK
spec (27.k8s.io.api.authorization.v1.SelfSubjectRulesReviewSpecRspecM
status (25.k8s.io.api.authorization.v1.SubjectRulesReviewStatusRstatus":
SelfSubjectRulesReviewSpec
	namespace (	R	namespace"˝
SubjectAccessReviewL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataH
spec (24.k8s.io.api.authorization.v1.SubjectAccessReviewSpecRspecN
status (26.k8s.io.api.authorization.v1.SubjectAccessReviewStatusRstatus"‹
SubjectAccessReviewSpec_
resourceAttributes (2/.k8s.io.api.authorization.v1.ResourceAttributesRresourceAttributesh
nonResourceAttributes (22.k8s.io.api.authorization.v1.NonResourceAttributesRnonResourceAttributes
user (	Ruser
groups (	RgroupsU
extra (2?.k8s.io.api.authorization.v1.SubjectAccessReviewSpec.ExtraEntryRextra
uid (	Ruida

ExtraEntry
key (	Rkey=
value (2'.k8s.io.api.authorization.v1.ExtraValueRvalue:8"è
SubjectAccessReviewStatus
allowed (Rallowed
denied (Rdenied
reason (	Rreason(
evaluationError (	RevaluationError"è
SubjectRulesReviewStatusO
resourceRules (2).k8s.io.api.authorization.v1.ResourceRuleRresourceRulesX
nonResourceRules (2,.k8s.io.api.authorization.v1.NonResourceRuleRnonResourceRules

incomplete (R
incomplete(
evaluationError (	RevaluationErrorBZk8s.io/api/authorization/v1
∆
,k8s.io/api/authentication/v1/generated.protok8s.io.api.authentication.v14k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto"(
AttestationValue
items (	Ritems"p
BoundObjectReference
kind (	Rkind

apiVersion (	R
apiVersion
name (	Rname
uID (	RuID""

ExtraValue
items (	Ritems"∞
SelfSubjectReviewL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataM
status (25.k8s.io.api.authentication.v1.SelfSubjectReviewStatusRstatus"]
SelfSubjectReviewStatusB
userInfo (2&.k8s.io.api.authentication.v1.UserInfoRuserInfo"Í
TokenRequestL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataB
spec (2..k8s.io.api.authentication.v1.TokenRequestSpecRspecH
status (20.k8s.io.api.authentication.v1.TokenRequestStatusRstatus"ë
TokenRequestSpec
	audiences (	R	audiences,
expirationSeconds (RexpirationSecondsZ
boundObjectRef (22.k8s.io.api.authentication.v1.BoundObjectReferenceRboundObjectRefd
attestations (2@.k8s.io.api.authentication.v1.TokenRequestSpec.AttestationsEntryRattestationso
AttestationsEntry
key (	RkeyD
value (2..k8s.io.api.authentication.v1.AttestationValueRvalue:8"à
TokenRequestStatus
token (	Rtoken\
expirationTimestamp (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRexpirationTimestamp"Á
TokenReviewL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
spec (2-.k8s.io.api.authentication.v1.TokenReviewSpecRspecG
status (2/.k8s.io.api.authentication.v1.TokenReviewStatusRstatus"E
TokenReviewSpec
token (	Rtoken
	audiences (	R	audiences"©
TokenReviewStatus$
authenticated (Rauthenticated:
user (2&.k8s.io.api.authentication.v1.UserInfoRuser
	audiences (	R	audiences
error (	Rerror"˝
UserInfo
username (	Rusername
uid (	Ruid
groups (	RgroupsG
extra (21.k8s.io.api.authentication.v1.UserInfo.ExtraEntryRextrab

ExtraEntry
key (	Rkey>
value (2(.k8s.io.api.authentication.v1.ExtraValueRvalue:8BZk8s.io/api/authentication/v1
≈
"k8s.io/api/rbac/v1/generated.protok8s.io.api.rbac.v14k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto"z
AggregationRuleg
clusterRoleSelectors (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRclusterRoleSelectors"‡
ClusterRoleL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
rules (2.k8s.io.api.rbac.v1.PolicyRuleRrulesM
aggregationRule (2#.k8s.io.api.rbac.v1.AggregationRuleRaggregationRule"“
ClusterRoleBindingL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata7
subjects (2.k8s.io.api.rbac.v1.SubjectRsubjects5
roleRef (2.k8s.io.api.rbac.v1.RoleRefRroleRef"¢
ClusterRoleBindingListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata<
items (2&.k8s.io.api.rbac.v1.ClusterRoleBindingRitems"î
ClusterRoleListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.k8s.io.api.rbac.v1.ClusterRoleRitems"Æ

PolicyRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources$
resourceNames (	RresourceNames(
nonResourceURLs (	RnonResourceURLs"ä
RoleL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
rules (2.k8s.io.api.rbac.v1.PolicyRuleRrules"À
RoleBindingL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata7
subjects (2.k8s.io.api.rbac.v1.SubjectRsubjects5
roleRef (2.k8s.io.api.rbac.v1.RoleRefRroleRef"î
RoleBindingListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.k8s.io.api.rbac.v1.RoleBindingRitems"Ü
RoleListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata.
items (2.k8s.io.api.rbac.v1.RoleRitems"M
RoleRef
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname"k
Subject
kind (	Rkind
apiGroup (	RapiGroup
name (	Rname
	namespace (	R	namespaceBZk8s.io/api/rbac/v1
©
*k8s.io/api/coordination/v1/generated.protok8s.io.api.coordination.v14k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto"ê
LeaseL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata9
spec (2%.k8s.io.api.coordination.v1.LeaseSpecRspec"ê
	LeaseListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata7
items (2!.k8s.io.api.coordination.v1.LeaseRitems"˚
	LeaseSpec&
holderIdentity (	RholderIdentity2
leaseDurationSeconds (RleaseDurationSecondsQ
acquireTime (2/.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTimeRacquireTimeM
	renewTime (2/.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTimeR	renewTime*
leaseTransitions (RleaseTransitions
strategy (	Rstrategy(
preferredHolder (	RpreferredHolderBZk8s.io/api/coordination/v1
ˇZ
&k8s.io/api/resource/v1/generated.protok8s.io.api.resource.v1"k8s.io/api/core/v1/generated.proto4k8s.io/apimachinery/pkg/api/resource/generated.proto4k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto"÷
AllocatedDeviceStatus
driver (	Rdriver
pool (	Rpool
device (	Rdevice
shareID (	RshareIDO

conditions (2/.k8s.io.apimachinery.pkg.apis.meta.v1.ConditionR
conditionsA
data (2-.k8s.io.apimachinery.pkg.runtime.RawExtensionRdataK
networkData (2).k8s.io.api.resource.v1.NetworkDeviceDataRnetworkData"Ä
AllocationResultH
devices (2..k8s.io.api.resource.v1.DeviceAllocationResultRdevicesD
nodeSelector (2 .k8s.io.api.core.v1.NodeSelectorRnodeSelector\
allocationTimestamp (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRallocationTimestamp"3
CELDeviceSelector

expression (	R
expression"á
CapacityRequestPolicyH
default (2..k8s.io.apimachinery.pkg.api.resource.QuantityRdefaultP
validValues (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalidValuesR

validRange (22.k8s.io.api.resource.v1.CapacityRequestPolicyRangeR
validRange"‰
CapacityRequestPolicyRange@
min (2..k8s.io.apimachinery.pkg.api.resource.QuantityRmin@
max (2..k8s.io.apimachinery.pkg.api.resource.QuantityRmaxB
step (2..k8s.io.apimachinery.pkg.api.resource.QuantityRstep"€
CapacityRequirementsV
requests (2:.k8s.io.api.resource.v1.CapacityRequirements.RequestsEntryRrequestsk
RequestsEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"O
CounterD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue"Ã

CounterSet
name (	RnameL
counters (20.k8s.io.api.resource.v1.CounterSet.CountersEntryRcounters\
CountersEntry
key (	Rkey5
value (2.k8s.io.api.resource.v1.CounterRvalue:8"‹
Device
name (	RnameN

attributes (2..k8s.io.api.resource.v1.Device.AttributesEntryR
attributesH
capacity (2,.k8s.io.api.resource.v1.Device.CapacityEntryRcapacity\
consumesCounters (20.k8s.io.api.resource.v1.DeviceCounterConsumptionRconsumesCounters
nodeName (	RnodeNameD
nodeSelector (2 .k8s.io.api.core.v1.NodeSelectorRnodeSelector
allNodes (RallNodes;
taints (2#.k8s.io.api.resource.v1.DeviceTaintRtaints 
bindsToNode	 (RbindsToNode,
bindingConditions
 (	RbindingConditions:
bindingFailureConditions (	RbindingFailureConditions:
allowMultipleAllocations (RallowMultipleAllocationsx
nodeAllocatableResources (2<.k8s.io.api.resource.v1.Device.NodeAllocatableResourcesEntryRnodeAllocatableResourcesf
AttributesEntry
key (	Rkey=
value (2'.k8s.io.api.resource.v1.DeviceAttributeRvalue:8c
CapacityEntry
key (	Rkey<
value (2&.k8s.io.api.resource.v1.DeviceCapacityRvalue:8|
NodeAllocatableResourcesEntry
key (	RkeyE
value (2/.k8s.io.api.resource.v1.NodeAllocatableResourceRvalue:8"≤
DeviceAllocationConfiguration
source (	Rsource
requests (	Rrequests]
deviceConfiguration (2+.k8s.io.api.resource.v1.DeviceConfigurationRdeviceConfiguration"∏
DeviceAllocationResultO
results (25.k8s.io.api.resource.v1.DeviceRequestAllocationResultRresultsM
config (25.k8s.io.api.resource.v1.DeviceAllocationConfigurationRconfig"…
DeviceAttribute
int (Rint
bool (Rbool
string (	Rstring
version (	Rversion
ints (Rints
bools (Rbools
strings (	Rstrings
versions	 (	Rversions"´
DeviceCapacityD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalueS
requestPolicy (2-.k8s.io.api.resource.v1.CapacityRequestPolicyRrequestPolicy"Ê
DeviceClaimA
requests (2%.k8s.io.api.resource.v1.DeviceRequestRrequestsJ
constraints (2(.k8s.io.api.resource.v1.DeviceConstraintRconstraintsH
config (20.k8s.io.api.resource.v1.DeviceClaimConfigurationRconfig"ï
DeviceClaimConfiguration
requests (	Rrequests]
deviceConfiguration (2+.k8s.io.api.resource.v1.DeviceConfigurationRdeviceConfiguration"ò
DeviceClassL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.k8s.io.api.resource.v1.DeviceClassSpecRspec"y
DeviceClassConfiguration]
deviceConfiguration (2+.k8s.io.api.resource.v1.DeviceConfigurationRdeviceConfiguration"ò
DeviceClassListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.k8s.io.api.resource.v1.DeviceClassRitems"’
DeviceClassSpecD
	selectors (2&.k8s.io.api.resource.v1.DeviceSelectorR	selectorsH
config (20.k8s.io.api.resource.v1.DeviceClassConfigurationRconfig2
extendedResourceName (	RextendedResourceName"`
DeviceConfigurationI
opaque (21.k8s.io.api.resource.v1.OpaqueDeviceConfigurationRopaque"Ñ
DeviceConstraint
requests (	Rrequests&
matchAttribute (	RmatchAttribute,
distinctAttribute (	RdistinctAttribute"¶
DeviceCounterConsumption

counterSet (	R
counterSetZ
counters (2>.k8s.io.api.resource.v1.DeviceCounterConsumption.CountersEntryRcounters0
compatibilityGroups (	RcompatibilityGroups\
CountersEntry
key (	Rkey5
value (2.k8s.io.api.resource.v1.CounterRvalue:8"L
DeviceDerivedAttribute
name (	Rname

expression (	R
expression"ª
DeviceRequest
name (	RnameD
exactly (2*.k8s.io.api.resource.v1.ExactDeviceRequestRexactlyP
firstAvailable (2(.k8s.io.api.resource.v1.DeviceSubRequestRfirstAvailable"ç
DeviceRequestAllocationResult
request (	Rrequest
driver (	Rdriver
pool (	Rpool
device (	Rdevice 
adminAccess (RadminAccessJ
tolerations (2(.k8s.io.api.resource.v1.DeviceTolerationRtolerations,
bindingConditions (	RbindingConditions:
bindingFailureConditions (	RbindingFailureConditions
shareID	 (	RshareIDw
consumedCapacity
 (2K.k8s.io.api.resource.v1.DeviceRequestAllocationResult.ConsumedCapacityEntryRconsumedCapacity.
skipNodeOperations (	RskipNodeOperationss
ConsumedCapacityEntry
key (	RkeyD
value (2..k8s.io.apimachinery.pkg.api.resource.QuantityRvalue:8"M
DeviceSelector;
cel (2).k8s.io.api.resource.v1.CELDeviceSelectorRcel"»
DeviceSubRequest
name (	Rname(
deviceClassName (	RdeviceClassNameD
	selectors (2&.k8s.io.api.resource.v1.DeviceSelectorR	selectors&
allocationMode (	RallocationMode
count (RcountJ
tolerations (2(.k8s.io.api.resource.v1.DeviceTolerationRtolerationsH
capacity (2,.k8s.io.api.resource.v1.CapacityRequirementsRcapacity\
derivedAttributes (2..k8s.io.api.resource.v1.DeviceDerivedAttributeRderivedAttributes"ó
DeviceTaint
key (	Rkey
value (	Rvalue
effect (	ReffectH
	timeAdded (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeR	timeAdded"Á
DeviceTaintRuleL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata?
spec (2+.k8s.io.api.resource.v1.DeviceTaintRuleSpecRspecE
status (2-.k8s.io.api.resource.v1.DeviceTaintRuleStatusRstatus"†
DeviceTaintRuleListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata=
items (2'.k8s.io.api.resource.v1.DeviceTaintRuleRitems"•
DeviceTaintRuleSpecS
deviceSelector (2+.k8s.io.api.resource.v1.DeviceTaintSelectorRdeviceSelector9
taint (2#.k8s.io.api.resource.v1.DeviceTaintRtaint"h
DeviceTaintRuleStatusO

conditions (2/.k8s.io.apimachinery.pkg.apis.meta.v1.ConditionR
conditions"Y
DeviceTaintSelector
driver (	Rdriver
pool (	Rpool
device (	Rdevice"ú
DeviceToleration
key (	Rkey
operator (	Roperator
value (	Rvalue
effect (	Reffect,
tolerationSeconds (RtolerationSeconds"ÿ
ExactDeviceRequest(
deviceClassName (	RdeviceClassNameD
	selectors (2&.k8s.io.api.resource.v1.DeviceSelectorR	selectors&
allocationMode (	RallocationMode
count (Rcount 
adminAccess (RadminAccessJ
tolerations (2(.k8s.io.api.resource.v1.DeviceTolerationRtolerationsH
capacity (2,.k8s.io.api.resource.v1.CapacityRequirementsRcapacity\
derivedAttributes (2..k8s.io.api.resource.v1.DeviceDerivedAttributeRderivedAttributes"u
NetworkDeviceData$
interfaceName (	RinterfaceName
ips (	Rips(
hardwareAddress (	RhardwareAddress"ˆ
NodeAllocatableMapping 
capacityKey (	RcapacityKey^
capacityMultiplier (2..k8s.io.apimachinery.pkg.api.resource.QuantityRcapacityMultiplierZ
deviceMultiplier (2..k8s.io.apimachinery.pkg.api.resource.QuantityRdeviceMultiplier"µ
NodeAllocatableOverheadF
perPod (2..k8s.io.apimachinery.pkg.api.resource.QuantityRperPodR
perContainer (2..k8s.io.apimachinery.pkg.api.resource.QuantityRperContainer"∞
NodeAllocatableResourceH
mapping (2..k8s.io.api.resource.v1.NodeAllocatableMappingRmappingK
overhead (2/.k8s.io.api.resource.v1.NodeAllocatableOverheadRoverhead"Ç
OpaqueDeviceConfiguration
driver (	RdriverM

parameters (2-.k8s.io.apimachinery.pkg.runtime.RawExtensionR
parameters"·
ResourceClaimL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata=
spec (2).k8s.io.api.resource.v1.ResourceClaimSpecRspecC
status (2+.k8s.io.api.resource.v1.ResourceClaimStatusRstatus"~
ResourceClaimConsumerReference
apiGroup (	RapiGroup
resource (	Rresource
name (	Rname
uid (	Ruid"ú
ResourceClaimListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata;
items (2%.k8s.io.api.resource.v1.ResourceClaimRitems"R
ResourceClaimSpec=
devices (2#.k8s.io.api.resource.v1.DeviceClaimRdevices"Ç
ResourceClaimStatusH

allocation (2(.k8s.io.api.resource.v1.AllocationResultR
allocationX
reservedFor (26.k8s.io.api.resource.v1.ResourceClaimConsumerReferenceRreservedForG
devices (2-.k8s.io.api.resource.v1.AllocatedDeviceStatusRdevices"¨
ResourceClaimTemplateL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataE
spec (21.k8s.io.api.resource.v1.ResourceClaimTemplateSpecRspec"¨
ResourceClaimTemplateListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataC
items (2-.k8s.io.api.resource.v1.ResourceClaimTemplateRitems"®
ResourceClaimTemplateSpecL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata=
spec (2).k8s.io.api.resource.v1.ResourceClaimSpecRspec"r
ResourcePool
name (	Rname

generation (R
generation.
resourceSliceCount (RresourceSliceCount"ú
ResourceSliceL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata=
spec (2).k8s.io.api.resource.v1.ResourceSliceSpecRspec"ú
ResourceSliceListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata;
items (2%.k8s.io.api.resource.v1.ResourceSliceRitems"â
ResourceSliceSpec
driver (	Rdriver8
pool (2$.k8s.io.api.resource.v1.ResourcePoolRpool
nodeName (	RnodeNameD
nodeSelector (2 .k8s.io.api.core.v1.NodeSelectorRnodeSelector
allNodes (RallNodes8
devices (2.k8s.io.api.resource.v1.DeviceRdevices6
perDeviceNodeSelection (RperDeviceNodeSelectionJ
sharedCounters (2".k8s.io.api.resource.v1.CounterSetRsharedCounters6
partitionTypeAttribute	 (	RpartitionTypeAttribute.
skipNodeOperations
 (	RskipNodeOperationsBZk8s.io/api/resource/v1
à
$k8s.io/api/events/v1/generated.protok8s.io.api.events.v1"k8s.io/api/core/v1/generated.proto4k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto"ﬁ
EventL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataM
	eventTime (2/.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTimeR	eventTime9
series (2!.k8s.io.api.events.v1.EventSeriesRseries0
reportingController (	RreportingController,
reportingInstance (	RreportingInstance
action (	Raction
reason (	RreasonA
	regarding (2#.k8s.io.api.core.v1.ObjectReferenceR	regarding=
related	 (2#.k8s.io.api.core.v1.ObjectReferenceRrelated
note
 (	Rnote
type (	RtypeK
deprecatedSource (2.k8s.io.api.core.v1.EventSourceRdeprecatedSourcef
deprecatedFirstTimestamp (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRdeprecatedFirstTimestampd
deprecatedLastTimestamp (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRdeprecatedLastTimestamp(
deprecatedCount (RdeprecatedCount"ä
	EventListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata1
items (2.k8s.io.api.events.v1.EventRitems"Ä
EventSeries
count (Rcount[
lastObservedTime (2/.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTimeRlastObservedTimeBZk8s.io/api/events/v1
÷,
)k8s.io/api/autoscaling/v1/generated.protok8s.io.api.autoscaling.v1"k8s.io/api/core/v1/generated.proto4k8s.io/apimachinery/pkg/api/resource/generated.proto4k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto/k8s.io/apimachinery/pkg/runtime/generated.proto6k8s.io/apimachinery/pkg/runtime/schema/generated.proto"Ì
ContainerResourceMetricSource
name (	Rname:
targetAverageUtilization (RtargetAverageUtilization^
targetAverageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRtargetAverageValue
	container (	R	container"Ò
ContainerResourceMetricStatus
name (	Rname<
currentAverageUtilization (RcurrentAverageUtilization`
currentAverageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRcurrentAverageValue
	container (	R	container"e
CrossVersionObjectReference
kind (	Rkind
name (	Rname

apiVersion (	R
apiVersion"≈
ExternalMetricSource

metricName (	R
metricName[
metricSelector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRmetricSelectorP
targetValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRtargetValue^
targetAverageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRtargetAverageValue"…
ExternalMetricStatus

metricName (	R
metricName[
metricSelector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRmetricSelectorR
currentValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRcurrentValue`
currentAverageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRcurrentAverageValue"Ö
HorizontalPodAutoscalerL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataJ
spec (26.k8s.io.api.autoscaling.v1.HorizontalPodAutoscalerSpecRspecP
status (28.k8s.io.api.autoscaling.v1.HorizontalPodAutoscalerStatusRstatus"å
 HorizontalPodAutoscalerCondition
type (	Rtype
status (	RstatusZ
lastTransitionTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage.
observedGeneration (RobservedGeneration"≥
HorizontalPodAutoscalerListJ
metadata (2..k8s.io.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataH
items (22.k8s.io.api.autoscaling.v1.HorizontalPodAutoscalerRitems"â
HorizontalPodAutoscalerSpec^
scaleTargetRef (26.k8s.io.api.autoscaling.v1.CrossVersionObjectReferenceRscaleTargetRef 
minReplicas (RminReplicas 
maxReplicas (RmaxReplicasF
targetCPUUtilizationPercentage (RtargetCPUUtilizationPercentage"ø
HorizontalPodAutoscalerStatus.
observedGeneration (RobservedGenerationP
lastScaleTime (2*.k8s.io.apimachinery.pkg.apis.meta.v1.TimeRlastScaleTime(
currentReplicas (RcurrentReplicas(
desiredReplicas (RdesiredReplicasH
currentCPUUtilizationPercentage (RcurrentCPUUtilizationPercentage"™

MetricSpec
type (	RtypeE
object (2-.k8s.io.api.autoscaling.v1.ObjectMetricSourceRobject?
pods (2+.k8s.io.api.autoscaling.v1.PodsMetricSourceRpodsK
resource (2/.k8s.io.api.autoscaling.v1.ResourceMetricSourceRresourcef
containerResource (28.k8s.io.api.autoscaling.v1.ContainerResourceMetricSourceRcontainerResourceK
external (2/.k8s.io.api.autoscaling.v1.ExternalMetricSourceRexternal"¨
MetricStatus
type (	RtypeE
object (2-.k8s.io.api.autoscaling.v1.ObjectMetricStatusRobject?
pods (2+.k8s.io.api.autoscaling.v1.PodsMetricStatusRpodsK
resource (2/.k8s.io.api.autoscaling.v1.ResourceMetricStatusRresourcef
containerResource (28.k8s.io.api.autoscaling.v1.ContainerResourceMetricStatusRcontainerResourceK
external (2/.k8s.io.api.autoscaling.v1.ExternalMetricStatusRexternal"˚
ObjectMetricSourceN
target (26.k8s.io.api.autoscaling.v1.CrossVersionObjectReferenceRtarget

metricName (	R
metricNameP
targetValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRtargetValueO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorR
averageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRaverageValue"˝
ObjectMetricStatusN
target (26.k8s.io.api.autoscaling.v1.CrossVersionObjectReferenceRtarget

metricName (	R
metricNameR
currentValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRcurrentValueO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorR
averageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRaverageValue"„
PodsMetricSource

metricName (	R
metricName^
targetAverageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRtargetAverageValueO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"Â
PodsMetricStatus

metricName (	R
metricName`
currentAverageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRcurrentAverageValueO
selector (23.k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"∆
ResourceMetricSource
name (	Rname:
targetAverageUtilization (RtargetAverageUtilization^
targetAverageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRtargetAverageValue" 
ResourceMetricStatus
name (	Rname<
currentAverageUtilization (RcurrentAverageUtilization`
currentAverageValue (2..k8s.io.apimachinery.pkg.api.resource.QuantityRcurrentAverageValue"œ
ScaleL
metadata (20.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata8
spec (2$.k8s.io.api.autoscaling.v1.ScaleSpecRspec>
status (2&.k8s.io.api.autoscaling.v1.ScaleStatusRstatus"'
	ScaleSpec
replicas (Rreplicas"E
ScaleStatus
replicas (Rreplicas
selector (	RselectorBZk8s.io/api/autoscaling/v1