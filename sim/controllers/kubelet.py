"""The kubelets of every node: node status (Ready, version, device-plugin resources with the 5-minute grace), pod start
and stop, crash loops, DRA device preparation."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from dragoman.fleet import nvidia_schema as nvidia
from dragoman.fleet.k8s.podclaims import pod_claim_names
from dragoman.sim.controllers import base
from dragoman.sim.controllers.base import (
    CRASH_AT_START,
    CRASH_LOOP_SECONDS,
    NOT_READY,
    POD_FAULTS,
    RUN_SECONDS,
    VISIBLE_DEVICES,
    Controller,
    Events,
    containers_running,
    dra_plugin_image,
    editable_status,
    is_device_plugin_pod,
    is_dra_kubelet_plugin_pod,
    max_restart_seconds,
    pod_faults,
    pod_phase,
    pod_ready,
    pod_terminating,
    unhealthy_devices,
)
from dragoman.sim.controllers.nodelifecycle import kubelet_stopped, runtime_down
from dragoman.sim.store import ApiError

DEFAULT_KUBELET_VERSION = "v1.37.1"
# cm/devicemanager: a disconnected plugin's resources keep their capacity this long (endpointStopGracePeriod).
ENDPOINT_GRACE_SECONDS = 300.0
# Drivers whose kubelet plugin the simulator can see as a pod; claims of other drivers prepare unconditionally.
DRA_DRIVERS_WITH_PODS = ("gpu.nvidia.com", "compute-domain.nvidia.com")
# The pod conditions a kubelet owns (pkg/kubelet/types PodConditionsByKubelet, PodReadyToStartContainers on in v1.37).
KUBELET_CONDITIONS = frozenset(
    {
        "PodScheduled",
        "Ready",
        "Initialized",
        "ContainersReady",
        "PodResizeInProgress",
        "PodResizePending",
        "PodReadyToStartContainers",
    }
)
# PodReadyToStartContainers once the pod's containers ended and its sandbox was stopped (status
# GeneratePodReadyToStartContainersCondition: kubetypes.PodSandboxNotReadyReason, PodSandboxNotReadyMsgSandboxNotReady).
SANDBOX_STOPPED = ("PodSandboxNotReady", "pod sandbox is not ready")
# kuberuntime's container restart back-off: 10 s, doubled per restart, at most 5 minutes.
BACKOFF_INITIAL_SECONDS = 10.0
BACKOFF_MAX_SECONDS = 300.0


def restart_delay(restarts: int, cap: float | None = None) -> float:
    """Seconds from a container's exit to its restart, `restarts` being its restartCount at the exit: kubelet
    v1.37.2's crash-loop back-off (kuberuntime doBackOff over flowcontrol.Backoff). None before the first restart
    (the container has no back-off entry yet: it starts again at once), then 10 s doubling per restart up to 300 s;
    `cap` (the node's maxContainerRestartPeriod, base.MAX_RESTART_SECONDS) caps both the start and the maximum. (The
    entry resets after a run of more than 600 s, which no fault here plays.)"""
    if restarts <= 0:
        return 0.0
    top = cap or BACKOFF_MAX_SECONDS
    return min(min(BACKOFF_INITIAL_SECONDS, top) * 2 ** (restarts - 1), top)


STOP_SECONDS = "sim.dragoman.io/stop-seconds"  # how long a deleted pod's containers take to stop (default 0)
RUNTIME_DOWN_MESSAGE = "container runtime is down"
# How long after its last good runtime Status call the kubelet says the runtime is down (kubelet.go
# maxWaitForContainerRuntime, runtime.go runtimeErrors): until then its Ready stays as it was.
MAX_WAIT_FOR_CONTAINER_RUNTIME = 30.0
# What a healthy kubelet posts (nodestatus.MemoryPressureCondition, DiskPressureCondition, PIDPressureCondition,
# ReadyCondition, in that order): type, status, reason, message, and the event it records when it sets that status.
NODE_CONDITIONS = (
    (
        "MemoryPressure",
        "False",
        "KubeletHasSufficientMemory",
        "kubelet has sufficient memory available",
        "NodeHasSufficientMemory",
    ),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", "NodeHasNoDiskPressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available", "NodeHasSufficientPID"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status", "NodeReady"),
)


def is_device_plugin_resource(name: str) -> bool:
    return name in ("nvidia.com/gpu", "nvidia.com/gpu.shared") or name.startswith("nvidia.com/mig-")


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default


def plugin_resources_from_labels(labels: dict) -> dict[str, int] | None:
    """What the NVIDIA device plugin advertises on a node, from GPU Feature Discovery's labels; None if unknown.

    Time-slicing multiplies by `nvidia.com/gpu.replicas`; MIG `single` advertises the slices as nvidia.com/gpu,
    MIG `mixed` one `nvidia.com/mig-<profile>` per profile (the rules live with the hardware model in nvidia.py).
    """
    from dragoman.fleet.nvidia_schema import node_hardware_from_labels

    hw = node_hardware_from_labels(labels)
    return hw.device_plugin_resources() if hw is not None else None


def _hex(data: str, n: int = 64) -> str:
    return hashlib.sha256(data.encode()).hexdigest()[:n]


class _DeviceResource:
    __slots__ = ("count", "stopped_at")

    def __init__(self, count: int, stopped_at: float | None = None) -> None:
        self.count = count
        self.stopped_at = stopped_at


class Kubelets(Controller):
    """One simulated kubelet per node, run as a single controller keyed by ("node", name) and ("pod", ns, name)."""

    name = "kubelet"

    def __init__(self, sim: Any, default_version: str = DEFAULT_KUBELET_VERSION) -> None:
        super().__init__(sim)
        self.default_version = default_version
        self.events = Events(self.store, self.clock, "kubelet")
        self._devices: dict[str, dict[str, _DeviceResource]] = {}
        self._seen_capacity: dict[str, dict[str, int]] = {}
        self._ip_next: dict[str, int] = {}
        self._crash: dict[tuple[str, str], float] = {}  # pod → simulated time of its next crash/restart
        self._prepare_failed: set[tuple[str, str, str]] = set()
        self._admitted: set[str] = set()
        self._managed: set[str] = set()  # pods whose container state this kubelet has set (started or faulted)
        self._runtime_down_since: dict[str, float] = {}  # node → simulated time its runtime was first seen down
        # node → the spec.unschedulable its kubelet last saw (kubelet.go lastNodeUnschedulable): a change is recorded
        # as a NodeNotSchedulable / NodeSchedulable event at the next status sync.
        self._last_unschedulable: dict[str, bool] = {}

    # -------------------------------------------------------------- events → keys

    def start_sync(self) -> None:
        # This kubelet ends deleted pods itself (their containers stopped, their terminal status written, then the
        # pod removed with grace 0), so the store must not remove them at the end of their grace period on its own:
        # a pod on a node whose kubelet is stopped stays terminating, as on a real cluster.
        if hasattr(self.store, "auto_reap_pods"):
            self.store.auto_reap_pods = False
        super().start_sync()

    def initial_keys(self):
        for node in list(self.cache.all("nodes")):
            # The scenario's nodes have had their kubelet running all along: what a node is now is what it last saw
            # (a node that joins later starts from false, as a starting kubelet does).
            self._last_unschedulable[node["metadata"]["name"]] = bool((node.get("spec") or {}).get("unschedulable"))
            yield ("node", node["metadata"]["name"])
        for pod in list(self.cache.all("pods")):
            if pod.get("spec", {}).get("nodeName"):
                yield ("pod", *base.nskey(pod))

    def on_change(self, etype: str, resource: str, obj: dict, old: dict | None) -> None:
        if resource == "nodes":
            if etype == "DELETED":
                name = obj["metadata"]["name"]
                self._devices.pop(name, None)
                self._seen_capacity.pop(name, None)
                self._runtime_down_since.pop(name, None)
                self._last_unschedulable.pop(name, None)
            else:
                name = obj["metadata"]["name"]
                self.enqueue(("node", name))
                faults_changed = old is not None and (old["metadata"].get("annotations") or {}).get(POD_FAULTS) != (
                    obj["metadata"].get("annotations") or {}
                ).get(POD_FAULTS)
                if faults_changed:
                    # The node's pod faults changed: its pods' kubelet applies them (or stops playing them).
                    for pod in list(self.cache.pods_by_node.get(name, {}).values()):
                        self.enqueue(("pod", *base.nskey(pod)))
                elif old is not None and (kubelet_stopped(old) or runtime_down(old)) and not _paused(obj):
                    # The kubelet (or its runtime) is back: it syncs every pod bound to it (status, and the ones deleted
                    # meanwhile).
                    for pod in list(self.cache.pods_by_node.get(name, {}).values()):
                        self.enqueue(("pod", *base.nskey(pod)))
        elif resource == "pods":
            node = obj.get("spec", {}).get("nodeName") or (old or {}).get("spec", {}).get("nodeName")
            if not node:
                return
            key = base.nskey(obj)
            if etype == "DELETED":
                self._crash.pop(key, None)
                self._managed.discard(obj["metadata"].get("uid", ""))
                self._admitted.discard(obj["metadata"].get("uid", ""))
            else:
                self.enqueue(("pod", *key))
            if is_device_plugin_pod(obj):
                self.enqueue(("node", node))
            if is_dra_kubelet_plugin_pod(obj):
                for pod in list(self.cache.pods_by_node.get(node, {}).values()):
                    if pod_phase(pod) == "Pending":
                        self.enqueue(("pod", *base.nskey(pod)))
        elif resource == "resourceclaims.resource.k8s.io":
            ns = obj["metadata"].get("namespace", "")
            for ref in (obj.get("status") or {}).get("reservedFor") or ():
                if ref.get("resource") == "pods":
                    self.enqueue(("pod", ns, ref.get("name", "")))
            for ref in obj["metadata"].get("ownerReferences") or ():
                if ref.get("kind") == "Pod":
                    self.enqueue(("pod", ns, ref.get("name", "")))

    def reconcile(self, key) -> None:
        if key[0] == "node":
            if not kubelet_stopped(self.cache.get("nodes", "", key[1])):
                self._reconcile_node(key[1])
        else:
            self._reconcile_pod(key[1], key[2])

    # -------------------------------------------------------------- node status

    def plugin_running(self, node_name: str) -> bool:
        return any(
            is_device_plugin_pod(p) and containers_running(p)
            for p in self.cache.pods_by_node.get(node_name, {}).values()
        )

    def dra_plugin_ready(self, node_name: str) -> bool:
        return any(
            is_dra_kubelet_plugin_pod(p) and containers_running(p) and pod_ready(p)
            for p in self.cache.pods_by_node.get(node_name, {}).values()
        )

    def _hardware(self, node: dict) -> dict[str, int]:
        name = node["metadata"]["name"]
        from_labels = plugin_resources_from_labels(node["metadata"].get("labels") or {})
        if from_labels is not None:
            return from_labels
        # A snapshot without GFD labels: what the node advertised when we first saw it is its hardware.
        return dict(
            self._seen_capacity.get(name) or {r: d.count for r, d in self._devices.get(name, {}).items() if d.count}
        )

    def _node_conditions(self, current: list[dict], node: dict | None = None) -> tuple[list[dict], list[str]]:
        """The node conditions a running kubelet posts (pkg/kubelet/nodestatus setters, in their order: the pressure
        conditions, then Ready last), from the ones the node has; and the events it records for the transitions.

        A running kubelet sets them at every status sync, so a condition the node lifecycle controller turned Unknown
        (a lapsed heartbeat) is True/False again at the kubelet's next sync, with a new lastTransitionTime."""
        wanted = NODE_CONDITIONS
        if self._runtime_said_down(node):
            # ReadyCondition with a runtime error: KubeletNotReady and the error's words (runtime.go runtimeErrors).
            wanted = (
                *NODE_CONDITIONS[:-1],
                ("Ready", "False", "KubeletNotReady", RUNTIME_DOWN_MESSAGE, "NodeNotReady"),
            )
        by_type = {c.get("type"): c.get("status") for c in current}
        if by_type.get("Ready") == "True" and all(by_type.get(ctype, value) == value for ctype, value, *_ in wanted):
            # Healthy as posted (a loaded picture may hold only Ready, or no reason): the next sync changes nothing
            # an observer compares (nodeStatusHasChanged ignores heartbeats), so nothing is written.
            return list(current), []
        now = self.clock.timestamp()
        out = [dict(c) for c in current]
        events: list[str] = []
        for ctype, value, reason, message, event in wanted:
            c = next((c for c in out if c.get("type") == ctype), None)
            if c is None:
                out.append(
                    {
                        "type": ctype,
                        "status": value,
                        "reason": reason,
                        "message": message,
                        "lastHeartbeatTime": now,
                        "lastTransitionTime": now,
                    }
                )
                # The pressure setters record their event when they add the condition (it starts Unknown); Ready's
                # setter only on a change of an existing one.
                if ctype != "Ready":
                    events.append(event)
                continue
            if c.get("status") != value:
                c.update(status=value, reason=reason, message=message, lastHeartbeatTime=now, lastTransitionTime=now)
                events.append(event)
            elif (c.get("reason"), c.get("message")) != (reason, message) and value != "True":
                c.update(reason=reason, message=message, lastHeartbeatTime=now)
        return out, events

    def _runtime_said_down(self, node: dict | None) -> bool:
        """Whether the kubelet's status says its runtime is down: MAX_WAIT_FOR_CONTAINER_RUNTIME after the agent
        first saw it down (its last good runtime check), as a real kubelet's runtimeErrors; until then the node's
        Ready stays as it was (the runtime's calls fail at once all the same: `_paused`)."""
        if node is None:
            return False
        name = node["metadata"]["name"]
        if not runtime_down(node):
            self._runtime_down_since.pop(name, None)
            return False
        if name not in self._runtime_down_since:
            ready = next(
                (c for c in (node.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), {}
            )
            said = ready.get("status") == "False" and ready.get("message") == RUNTIME_DOWN_MESSAGE
            # A node loaded (or left by an earlier agent) saying so already keeps saying it.
            self._runtime_down_since[name] = self.clock.seconds() - (MAX_WAIT_FOR_CONTAINER_RUNTIME if said else 0.0)
        since = self._runtime_down_since[name]
        left = since + MAX_WAIT_FOR_CONTAINER_RUNTIME - self.clock.seconds()
        if left > 0:
            self.enqueue_after(("node", name), left)
            return False
        return True

    def _reconcile_node(self, name: str) -> None:
        node = self.cache.get("nodes", "", name)
        if node is None:
            return
        status = node.get("status") or {}
        if name not in self._seen_capacity:
            self._seen_capacity[name] = {
                r: _int(v)
                for r, v in (status.get("capacity") or {}).items()
                if is_device_plugin_resource(r) and _int(v) > 0
            }
        new = dict(status)
        changed = False

        conditions, events = self._node_conditions(status.get("conditions") or [], node)
        # recordNodeSchedulableEvent, run by the kubelet's status sync whatever else changed.
        unschedulable = bool((node.get("spec") or {}).get("unschedulable"))
        if self._last_unschedulable.get(name, False) != unschedulable:
            self._last_unschedulable[name] = unschedulable
            events.append("NodeNotSchedulable" if unschedulable else "NodeSchedulable")
        if conditions != (status.get("conditions") or []):
            new["conditions"] = conditions
            changed = True
        info = dict(status.get("nodeInfo") or {})
        # Every field the kubelet reports (clients' typed models require them); a version already there is kept.
        h = _hex(name, 32)
        for field, value in (
            ("kubeletVersion", self.default_version),
            ("kubeProxyVersion", ""),
            ("containerRuntimeVersion", "containerd://2.1.4"),
            ("operatingSystem", "linux"),
            ("architecture", "amd64"),
            ("osImage", "Ubuntu 24.04.3 LTS"),
            ("kernelVersion", "6.8.0-1031-nvidia"),
            ("machineID", h),
            ("systemUUID", f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"),
            ("bootID", _hex("boot" + name, 32)),
        ):
            if field not in info or (field == "kubeletVersion" and not info[field]):
                info[field] = value
        if info != (status.get("nodeInfo") or {}):
            new["nodeInfo"] = info
            changed = True

        capacity = dict(status.get("capacity") or {})
        allocatable = dict(status.get("allocatable") or {})
        devices = self._devices.setdefault(name, {})
        now_s = self.clock.seconds()
        advertised = self._hardware(node) if self.plugin_running(name) else {}
        for r, n in advertised.items():
            devices[r] = _DeviceResource(n)
            if capacity.get(r) != str(n) or allocatable.get(r) != str(n):
                capacity[r] = allocatable[r] = str(n)
                changed = True
        known = (
            set(devices)
            | {r for r in capacity if is_device_plugin_resource(r)}
            | {r for r in allocatable if is_device_plugin_resource(r)}
        )
        for r in sorted(known - set(advertised)):
            d = devices.get(r)
            if d is None:
                d = devices[r] = _DeviceResource(_int(capacity.get(r)))
            if d.stopped_at is None:
                d.stopped_at = now_s
            # Unhealthy at once: the next status update reports allocatable 0.
            if allocatable.get(r) != "0":
                allocatable[r] = "0"
                changed = True
            want_cap = "0" if now_s >= d.stopped_at + ENDPOINT_GRACE_SECONDS else str(d.count)
            if want_cap != "0":
                self.enqueue_at(("node", name), d.stopped_at + ENDPOINT_GRACE_SECONDS)
            if capacity.get(r) != want_cap:
                capacity[r] = want_cap
                changed = True
        if not changed:
            self._node_events(node, events)
            return
        new["capacity"] = capacity
        new["allocatable"] = allocatable
        # As the kubelet's PatchNodeStatus: a strategic merge patch of what it computed, with no resourceVersion, so
        # a concurrent writer (the node lifecycle controller, a label or taint change) never makes it lose a round.
        patch = {k: new[k] for k in ("conditions", "nodeInfo", "capacity", "allocatable") if k in new}
        try:
            self.store.patch("nodes", None, name, {"status": patch}, "strategic", subresource="status")
        except ApiError as exc:
            if exc.code == 404:
                return
            raise
        self._node_events(node, events)

    def _node_events(self, node: dict, reasons: list[str]) -> None:
        """recordNodeStatusEvent: each reason as a Normal event on the node, "Node NAME status is now: REASON"."""
        name = node["metadata"]["name"]
        for reason in reasons:
            self.events.emit(node, "Normal", reason, f"Node {name} status is now: {reason}", host=name)

    # -------------------------------------------------------------- pods

    def _reconcile_pod(self, ns: str, name: str) -> None:
        pod = self.cache.get("pods", ns, name)
        if pod is None:
            self._crash.pop((ns, name), None)
            return
        node_name = pod.get("spec", {}).get("nodeName")
        if not node_name:
            return
        node = self.cache.get("nodes", "", node_name)
        if node is None:
            return  # no kubelet: the pod garbage collector (sim/controllers/podgc.py) removes it
        if _paused(node):
            # A stopped kubelet (or one whose runtime is down) neither starts nor stops containers, nor reports them;
            # a pod deleted meanwhile stays terminating (kube-apiserver removes a pod bound to a node only when its
            # kubelet confirms, or a force delete) until the kubelet comes back.
            return
        if pod_terminating(pod):
            self._stop(pod)
            return
        phase = pod_phase(pod)
        if phase in ("Succeeded", "Failed"):
            return
        if phase == "Pending":
            self._start(pod, node)
        else:
            self._running(pod)

    def _stop(self, pod: dict) -> None:
        md = pod["metadata"]
        delay = _int(self._faults(pod).get(STOP_SECONDS), 0)
        deleted_at = self.clock.seconds_at(md.get("deletionTimestamp"))
        grace = _int(md.get("deletionGracePeriodSeconds"), 0)
        if delay > 0 and deleted_at is not None:
            self._write_terminating(pod)
            # deletionTimestamp is the end of the grace period; the containers stop `delay` after the delete.
            stop_at = deleted_at - grace + min(delay, grace)
            if self.clock.seconds() < stop_at:
                self.enqueue_at(("pod", md.get("namespace", ""), md["name"]), stop_at)
                return
        if pod_phase(pod) not in ("Succeeded", "Failed") and (pod.get("status") or {}).get("containerStatuses"):
            # As the kubelet since v1.27: a deleted pod's containers are stopped and its terminal status is written
            # before the pod object goes (status_manager canBeDeleted), so a watcher sees how it ended.
            self._terminate(pod, killed=delay >= grace > 0)
        try:
            self.store.delete(
                "pods", md.get("namespace"), md["name"], grace_period_seconds=0, preconditions={"uid": md.get("uid")}
            )
        except Exception as exc:
            if getattr(exc, "code", None) not in (404, 409):
                raise

    def _write_terminating(self, pod: dict) -> None:
        """A graceful deletion bumps the pod's generation (rest.BeforeDelete); a kubelet v1.37.2's SyncTerminatingPod
        first writes the status it computes from the deleted pod (the same containers, every condition and the status
        at the new observedGeneration), then stops the containers. Written once, when the generation moved."""
        md = pod["metadata"]
        generation = md.get("generation")
        status = pod.get("status") or {}
        if not isinstance(generation, int) or status.get("observedGeneration") in (None, generation):
            return
        if pod_phase(pod) in ("Succeeded", "Failed") or not status.get("containerStatuses"):
            return
        cur = editable_status(self.store, "pods", md.get("namespace"), md["name"])
        if cur is None:
            return
        try:
            self._write_pod_status(cur)
        except ApiError as exc:
            if exc.code not in (404, 409):
                raise

    def _admit(self, pod: dict, node: dict):
        """The admission decision (sim/controllers/admission.py), given what this kubelet sees on the node."""
        from dragoman.sim.controllers import admission

        node_name = node["metadata"]["name"]
        drivers = {
            res.get("driver", "")
            for _, claim in self._pod_claims(pod)
            if claim
            for res in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ()
        }
        if not self.dra_plugin_ready(node_name):
            drivers -= set(DRA_DRIVERS_WITH_PODS)
        return admission.admit(pod, node, _AdmissionView(self, node_name, pod), drivers_ready=frozenset(drivers))

    def _pod_claims(self, pod: dict) -> list[tuple[str, dict | None]]:
        ns = pod["metadata"].get("namespace", "")
        status = pod.get("status") or {}
        names = [n or "" for _, n in pod_claim_names(pod)]
        ext = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if ext and admission_has_bridge(self.cache.get("nodes", "", pod["spec"].get("nodeName", "")) or {}):
            names.append(ext)
        return [(n, self.cache.get("resourceclaims.resource.k8s.io", ns, n) if n else None) for n in names]

    def _claims_ready(self, pod: dict) -> tuple[bool, dict[str, list[dict]]]:
        """Whether every claim of the pod is allocated and reserved for it, and allocatedResourcesStatus entries."""
        uid = pod["metadata"].get("uid")
        per_claim: dict[str, list[dict]] = {}
        driver_version: str | None = None
        node_name = pod["spec"].get("nodeName", "")
        unhealthy = unhealthy_devices(self.cache.get("nodes", "", node_name))
        for claim_name, claim in self._pod_claims(pod):
            if claim is None:
                return False, {}
            st = claim.get("status") or {}
            alloc = st.get("allocation")
            if not alloc or not any(r.get("uid") == uid for r in st.get("reservedFor") or ()):
                return False, {}
            for res in (alloc.get("devices") or {}).get("results") or ():
                driver, pool, device = res.get("driver"), res.get("pool"), res.get("device")
                # Named by the first CDI device name the driver's NodePrepareResources returned, "driver/pool/device"
                # when it returned none (cm/dra/manager.go buildResourceHealth): NVIDIA's GPU driver names one per
                # device; drivers the simulator has no plugin for return none here.
                rid = f"{driver}/{pool}/{device}"
                if driver == nvidia.DRIVER:
                    if driver_version is None:
                        driver_version = self._dra_driver_version(pod["spec"].get("nodeName", ""))
                    rid = nvidia.cdi_device_ids(driver_version, claim["metadata"].get("uid", ""), str(device))[0]
                entry = {"resourceID": rid, "health": "Healthy"}
                if driver == nvidia.DRIVER and pool == node_name and device in unhealthy:
                    # The driver's health stream says so; the kubelet passes its message on (HealthStatusMessage).
                    entry = {"resourceID": rid, "health": "Unhealthy", "message": unhealthy[str(device)]}
                per_claim.setdefault(f"claim:{claim_name}/{res.get('request', '')}", []).append(entry)
        return True, per_claim

    def _dra_driver_version(self, node_name: str) -> str:
        """The GPU DRA driver release running on the node (its kubelet plugin pod's image), newest when none runs."""
        for p in self.cache.pods_by_node.get(node_name, {}).values():
            if is_dra_kubelet_plugin_pod(p) and containers_running(p):
                return nvidia.driver_version_from_image(dra_plugin_image(p))
        return nvidia.SCHEMA_25_12

    def _device_uuid(self, driver: str, pool: str, device: str) -> str | None:
        for sl in self.cache.slices_by_pool.get((driver, pool), {}).values():
            for dev in sl.get("spec", {}).get("devices") or ():
                if dev.get("name") == device:
                    attr = (
                        (dev.get("attributes") or {}).get("uuid")
                        or (dev.get("attributes") or {}).get(f"{driver}/uuid")
                        or {}
                    )
                    return attr.get("string")
        return None

    def _write_creating(self, pod: dict) -> None:
        cur = editable_status(self.store, "pods", pod["metadata"].get("namespace"), pod["metadata"]["name"])
        if cur is None:
            return
        status = cur.setdefault("status", {})
        status.setdefault("phase", "Pending")
        status["containerStatuses"] = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}},
            }
            for c in cur.get("spec", {}).get("containers") or []
        ]
        self._set_condition(status, "PodScheduled", "True")
        self._set_condition(status, "Initialized", "True")
        self._set_condition(
            status,
            "Ready",
            "False",
            "ContainersNotReady",
            "containers with unready status: ["
            + " ".join(c["name"] for c in cur["spec"].get("containers") or [])
            + "]",
        )
        self._set_condition(
            status, "ContainersReady", "False", "ContainersNotReady", status["conditions"][-1]["message"]
        )
        self._write_pod_status(cur)

    def _start(self, pod: dict, node: dict) -> None:
        md = pod["metadata"]
        node_name = node["metadata"]["name"]
        result = self._admit(pod, node)
        if not result.admitted:
            self.events.emit(
                pod,
                "Warning",
                result.event_reason or result.reason,
                result.event_message or result.message,
                host=node_name,
            )
            cur = editable_status(self.store, "pods", md.get("namespace"), md["name"])
            if cur is None:
                return
            status = cur.setdefault("status", {})
            status.update(result.status_patch() or {})
            status["startTime"] = status.get("startTime") or self.clock.timestamp()
            self._write_pod_status(cur)
            return
        if result.waiting:
            marker = (md.get("namespace", ""), md["name"], result.event_reason)
            loaded_waiting = md.get("uid", "") not in self._managed and any(
                ((cs.get("state") or {}).get("waiting") or {}).get("reason") == "ContainerCreating"
                for cs in (pod.get("status") or {}).get("containerStatuses") or ()
            )
            if loaded_waiting:
                # Loaded already waiting for its driver (a snapshot): it stays so, without a new event, until the driver
                # is ready.
                self._prepare_failed.add(marker)
            if marker not in self._prepare_failed:
                self._prepare_failed.add(marker)
                self.events.emit(pod, "Warning", result.event_reason, result.event_message, host=node_name)
                self._write_creating(pod)
            return
        ready_to_run, per_claim = self._claims_ready(pod)
        if not ready_to_run:
            return
        uuids = list(result.devices)
        self._prepare_failed = {m for m in self._prepare_failed if m[:2] != (md.get("namespace", ""), md["name"])}
        self._admitted.add(md.get("uid", ""))
        self._managed.add(md.get("uid", ""))
        annotations = self._faults(pod)
        visible = ",".join(uuids)
        if uuids and annotations.get(VISIBLE_DEVICES) != visible:
            self.store.patch(
                "pods", md.get("namespace"), md["name"], {"metadata": {"annotations": {VISIBLE_DEVICES: visible}}}
            )
        cur = editable_status(self.store, "pods", md.get("namespace"), md["name"])
        if cur is None:
            return
        now = self.clock.timestamp()
        status = cur.setdefault("status", {})
        node_ip = self._node_ip(node)
        pod_ip = node_ip if cur["spec"].get("hostNetwork") else self._pod_ip(node)
        not_ready = annotations.get(NOT_READY) == "true"
        crash_at_start = annotations.get(CRASH_AT_START) == "true"
        status["phase"] = "Running"
        status["hostIP"] = node_ip
        status["hostIPs"] = [{"ip": node_ip}]
        status["podIP"] = pod_ip
        status["podIPs"] = [{"ip": pod_ip}]
        status["startTime"] = status.get("startTime") or now
        status.pop("reason", None)
        status.pop("message", None)
        spec = cur["spec"]
        if spec.get("initContainers"):
            status["initContainerStatuses"] = [
                {
                    "name": c["name"],
                    "image": c.get("image", ""),
                    "imageID": _image_id(c),
                    "containerID": self._cid(cur, c["name"]),
                    "ready": True,
                    "started": False,
                    "restartCount": 0,
                    "state": {
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": now,
                            "finishedAt": now,
                            "containerID": self._cid(cur, c["name"]),
                        }
                    },
                }
                for c in spec["initContainers"]
            ]
        statuses = []
        claims_by_container = self._claims_by_container(cur, per_claim)
        for name, entries in self._device_plugin_held(cur, node).items():
            claims_by_container.setdefault(name, []).extend(entries)
        for c in spec.get("containers") or []:
            cs = {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": _image_id(c),
                "containerID": self._cid(cur, c["name"]),
                "ready": not not_ready,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now}},
                "lastState": {},
            }
            if crash_at_start:
                # It exits as it starts: the first status the kubelet writes already shows it ended.
                cs.update(ready=False, started=False, state={"terminated": _exited(cs["containerID"], now, now)})
            if claims_by_container.get(c["name"]):
                cs["allocatedResourcesStatus"] = claims_by_container[c["name"]]
            statuses.append(cs)
        status["containerStatuses"] = statuses
        self._set_condition(status, "PodReadyToStartContainers", "True")
        self._set_condition(status, "Initialized", "True")
        self._set_ready(status, cur, not (not_ready or crash_at_start))
        self._set_condition(status, "PodScheduled", "True")
        self._write_pod_status(cur)
        if crash_at_start:
            self._back_off(pod, 0)
            return
        run = _int(annotations.get(RUN_SECONDS), 0)
        if run > 0:
            self.enqueue_after(("pod", md.get("namespace", ""), md["name"]), run)
        if annotations.get(CRASH_LOOP_SECONDS):
            self._crash[(md.get("namespace", ""), md["name"])] = self.clock.seconds() + max(
                1, _int(annotations[CRASH_LOOP_SECONDS], 10)
            )
            self.enqueue_after(
                ("pod", md.get("namespace", ""), md["name"]), max(1, _int(annotations[CRASH_LOOP_SECONDS], 10))
            )

    def _device_plugin_held(self, pod: dict, node: dict) -> dict[str, list[dict]]:
        """The devices the device manager gives each container for the device-plugin resources it asks for, as the
        kubelet reports them (containerStatuses[].allocatedResourcesStatus, named after the resource): the first
        IDs in the plugin's order that no other pod on the node holds (dragoman's device plugin prefers them so).
        A pod placed through the bridge, or asking for a resource the node does not report, gets none."""
        from dragoman.fleet.k8s.podresources import container_requests
        from dragoman.fleet.k8s.quantity import amount as resource_amount

        node_name = node["metadata"]["name"]
        hw = nvidia.node_hardware_from_labels(node["metadata"].get("labels") or {})
        if hw is None:
            return {}
        devices = nvidia.device_plugin_devices(node_name, hw)
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        status = pod.get("status") or {}
        bridged = {
            m.get("resourceName")
            for m in (status.get("extendedResourceClaimStatus") or {}).get("requestMappings") or ()
        }
        uid = pod["metadata"].get("uid")
        held: set[str] = set()
        for other in self.cache.pods_by_node.get(node_name, {}).values():
            if other["metadata"].get("uid") == uid or pod_phase(other) in ("Succeeded", "Failed"):
                continue
            for cs in (other.get("status") or {}).get("containerStatuses") or ():
                for entry in cs.get("allocatedResourcesStatus") or ():
                    if entry.get("name") in devices:
                        held.update(r.get("resourceID") for r in entry.get("resources") or ())
        out: dict[str, list[dict]] = {}
        for c in pod["spec"].get("containers") or []:
            for rname, value in sorted(container_requests(c).items()):
                n = resource_amount(rname, value)
                if rname not in devices or rname in bridged or not n or _int(allocatable.get(rname)) == 0:
                    continue
                free = [d["id"] for d in devices[rname] if d["id"] not in held][:n]
                held.update(free)
                out.setdefault(c["name"], []).append(
                    {"name": rname, "resources": [{"resourceID": i, "health": "Healthy"} for i in free]}
                )
        return out

    def _claims_by_container(self, pod: dict, per_claim: dict[str, list[dict]]) -> dict[str, list[dict]]:
        if not per_claim:
            return {}
        out: dict[str, list[dict]] = {}
        # Only for a container that names a claim in resources.claims: a bridged container (limits: nvidia.com/gpu,
        # its claim in extendedResourceClaimStatus) gets none from a real kubelet v1.37.2 (its DRA manager's
        # UpdateAllocatedResourcesStatus skips containers without resources.claims).
        pod_claims = dict(pod_claim_names(pod))
        for c in pod["spec"].get("containers") or []:
            for ref in (c.get("resources") or {}).get("claims") or ():
                claim_name = pod_claims.get(ref.get("name"))
                # Named as the API server validates it: after the container's own reference ("claim:<ref>" or
                # "claim:<ref>/<request>"), not after the ResourceClaim object (pkg/apis/core/validation).
                status_name = (
                    f"claim:{ref.get('name')}/{ref['request']}" if ref.get("request") else f"claim:{ref.get('name')}"
                )
                devices: list[dict] = []
                for key, res in per_claim.items():
                    cname, _, req = key[len("claim:") :].partition("/")
                    if cname == claim_name and (
                        not ref.get("request") or req == ref["request"] or req.startswith(ref["request"] + "/")
                    ):
                        devices.extend(res)
                if devices:
                    out.setdefault(c["name"], []).append({"name": status_name, "resources": devices})
        return out

    def _running(self, pod: dict) -> None:
        md = pod["metadata"]
        key = (md.get("namespace", ""), md["name"])
        annotations = self._faults(pod)
        status = pod.get("status") or {}
        now = self.clock.seconds()
        run = _int(annotations.get(RUN_SECONDS), 0)
        started = self.clock.seconds_at(status.get("startTime"))
        if run > 0 and started is not None:
            if now >= started + run:
                self._finish(pod)
                return
            self.enqueue_at(("pod", *key), started + run)
        crash_period = _int(annotations.get(CRASH_LOOP_SECONDS), 0)
        statuses = status.get("containerStatuses") or []
        crashing = any(
            "waiting" in (cs.get("state") or {}) or "terminated" in (cs.get("state") or {}) for cs in statuses
        )
        if annotations.get(CRASH_AT_START) == "true":
            self._crash_at_start(pod, crashing)
            return
        if crash_period > 0:
            # CRASH_LOOP_SECONDS: each start runs crash_period seconds and exits 1; the back-off decides the restart.
            restarts = max((int(cs.get("restartCount") or 0) for cs in statuses), default=0)
            due = self._crash.get(key)
            if due is None:
                if crashing:
                    # Loaded (or left by an earlier agent) down: it restarts at the end of its back-off.
                    self._back_off(pod, restarts, exited=False)
                else:
                    # Running when the fault arrives: it exits crash_period seconds after its start.
                    ran_from = next(
                        (
                            self.clock.seconds_at((cs.get("state") or {}).get("running", {}).get("startedAt"))
                            for cs in statuses
                        ),
                        None,
                    )
                    self._crash[key] = max(now, (now if ran_from is None else ran_from) + crash_period)
                    self.enqueue_at(("pod", *key), self._crash[key])
            elif now >= due:
                if crashing:
                    self._flip(pod, crash=False)
                    self._crash[key] = now + crash_period
                    self.enqueue_after(("pod", *key), crash_period)
                else:
                    self._flip(pod, crash=True)
                    self._back_off(pod, restarts)
            return
        self._crash.pop(key, None)
        uid = md.get("uid", "")
        if _ready_taken_by_node_controller(pod):
            # The node lifecycle controller marked the pod not ready while this kubelet was silent; the kubelet's
            # status sync computes Ready from its containers again (they kept running) and writes it back.
            cur = editable_status(self.store, "pods", key[0], key[1])
            if cur is None:
                return
            self._set_condition(cur["status"], "Ready", "True")
            self._write_pod_status(cur)
            return
        if uid not in self._managed and annotations.get(NOT_READY) != "true":
            # A pod loaded running (a snapshot) keeps the state it was loaded with: a container loaded in
            # CrashLoopBackOff or unready stays so until a fault annotation or a restart says otherwise.
            return
        self._managed.add(uid)
        if crashing:
            self._flip(pod, crash=False)
            return
        want_ready = annotations.get(NOT_READY) != "true"
        if pod_ready(pod) != want_ready:
            cur = editable_status(self.store, "pods", key[0], key[1])
            if cur is None:
                return
            for cs in cur["status"].get("containerStatuses") or []:
                cs["ready"] = want_ready
            self._set_ready(cur["status"], cur, want_ready)
            self._write_pod_status(cur)

    def _faults(self, pod: dict) -> dict:
        """The pod's fault annotations, its node's POD_FAULTS for its DaemonSet included (base.pod_faults)."""
        return pod_faults(pod, self.cache.get("nodes", "", pod.get("spec", {}).get("nodeName", "")))

    def _back_off(self, pod: dict, restarts: int, *, exited: bool = True) -> None:
        """The container exited with `restarts` restarts (`exited`; else it was found down already): the kubelet
        restarts it after its back-off (`restart_delay`; ReduceDefaultCrashLoopBackOffDecay off in v1.37), and says
        so (BackOff) when it has just exited and has to wait."""
        md = pod["metadata"]
        delay = self._restart_delay(pod, restarts)
        self._crash[(md.get("namespace", ""), md["name"])] = self.clock.seconds() + delay
        self.enqueue_after(("pod", md.get("namespace", ""), md["name"]), delay)
        if exited and delay > 0:
            self._back_off_event(pod)

    def _restart_delay(self, pod: dict, restarts: int) -> float:
        node = self.cache.get("nodes", "", (pod.get("spec") or {}).get("nodeName", ""))
        return restart_delay(restarts, max_restart_seconds(node))

    def _back_off_event(self, pod: dict) -> None:
        md = pod["metadata"]
        names = [c["name"] for c in pod["spec"].get("containers") or []][:1] or ["?"]
        self.events.emit(
            pod,
            "Warning",
            "BackOff",
            # The kubelet's words (kuberuntime's BackOff event).
            f"Back-off restarting failed container {names[0]} in pod "
            f"{md['name']}_{md.get('namespace', '')}({md.get('uid', '')})",
            host=pod["spec"].get("nodeName"),
        )

    def _crash_at_start(self, pod: dict, crashing: bool) -> None:
        """CRASH_AT_START: at each end of the back-off the container is started again and exits at once (restartCount
        up, the attempt before in lastState, state.terminated throughout, as a kubelet v1.37.2 shows a crash loop);
        it is never seen running. A pod loaded crash-looping, or running when the fault arrives, joins the loop."""
        md = pod["metadata"]
        key = (md.get("namespace", ""), md["name"])
        self._managed.add(md.get("uid", ""))
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        restarts = max((int(cs.get("restartCount") or 0) for cs in statuses), default=0)
        due = self._crash.get(key)
        if due is None and crashing:
            # Loaded (or left by an earlier agent) down: the next restart is due at the end of its back-off.
            self._back_off(pod, restarts, exited=False)
            return
        if due is not None and self.clock.seconds() < due:
            return
        cur = editable_status(self.store, "pods", key[0], key[1])
        if cur is None:
            return
        now = self.clock.timestamp()
        for cs in cur["status"].get("containerStatuses") or []:
            state = cs.get("state") or {}
            if due is not None:
                if "terminated" in state:
                    cs["lastState"] = {"terminated": state["terminated"]}
                cs["restartCount"] = int(cs.get("restartCount") or 0) + 1
            started = (state.get("running") or {}).get("startedAt", now)
            ended = _exited(cs.get("containerID", ""), started, now)
            cs.update(ready=False, started=False, state={"terminated": ended})
        self._set_ready(cur["status"], cur, False)
        self._write_pod_status(cur)
        self._back_off(pod, restarts + (1 if due is not None else 0))

    def _flip(self, pod: dict, crash: bool) -> None:
        md = pod["metadata"]
        self._managed.add(md.get("uid", ""))
        cur = editable_status(self.store, "pods", md.get("namespace"), md["name"])
        if cur is None:
            return
        now = self.clock.timestamp()
        status = cur["status"]
        for cs in status.get("containerStatuses") or []:
            if crash:
                # A real kubelet v1.37.2 shows the exited attempt as state.terminated for the whole back-off (its
                # pod worker wakes at the back-off's end, so the waiting CrashLoopBackOff it would write is replaced
                # by the restart before it is seen); lastState keeps the attempt before.
                started = ((cs.get("state") or {}).get("running") or {}).get("startedAt", now)
                cs["state"] = {
                    "terminated": {
                        "exitCode": 1,
                        "reason": "Error",
                        "startedAt": started,
                        "finishedAt": now,
                        "containerID": cs.get("containerID", ""),
                    }
                }
                cs["ready"] = False
                cs["started"] = False
            else:
                state = cs.get("state") or {}
                if "terminated" in state:
                    cs["lastState"] = {"terminated": state["terminated"]}
                cs["restartCount"] = int(cs.get("restartCount", 0)) + (
                    1 if "waiting" in state or "terminated" in state else 0
                )
                cs["state"] = {"running": {"startedAt": now}}
                cs["ready"] = self._faults(pod).get(NOT_READY) != "true"
                cs["started"] = True
        ready = not crash and self._faults(pod).get(NOT_READY) != "true"
        self._set_ready(status, cur, ready)
        self._write_pod_status(cur)

    def _terminate(self, pod: dict, killed: bool) -> None:
        """The containers stopped by the deletion: SIGTERM ends them (exit 143), or SIGKILL at the end of the grace
        period (137); getPhase makes the pod Failed (a container exited non-zero), the ready conditions say
        PodFailed."""
        md = pod["metadata"]
        cur = editable_status(self.store, "pods", md.get("namespace"), md["name"])
        if cur is None:
            return
        now = self.clock.timestamp()
        status = cur["status"]
        if not any("running" in (cs.get("state") or {}) for cs in status.get("containerStatuses") or []):
            # Containers that never started stay waiting, and getPhase keeps such a pod Pending: nothing to report.
            return
        status["phase"] = "Failed"
        for cs in status.get("containerStatuses") or []:
            state = cs.get("state") or {}
            running = state.get("running")
            if running is None:
                continue
            cs["state"] = {
                "terminated": {
                    "exitCode": 137 if killed else 143,
                    "reason": "Error",
                    "startedAt": running.get("startedAt", now),
                    "finishedAt": now,
                    "containerID": cs.get("containerID", ""),
                }
            }
            cs["ready"] = False
            cs["started"] = False
        self._set_condition(status, "PodReadyToStartContainers", "False", *SANDBOX_STOPPED)
        self._set_condition(status, "Ready", "False", "PodFailed")
        self._set_condition(status, "ContainersReady", "False", "PodFailed")
        try:
            self._write_pod_status(cur)
        except Exception as exc:
            if getattr(exc, "code", None) not in (404, 409):
                raise

    def _finish(self, pod: dict) -> None:
        md = pod["metadata"]
        cur = editable_status(self.store, "pods", md.get("namespace"), md["name"])
        if cur is None:
            return
        now = self.clock.timestamp()
        status = cur["status"]
        status["phase"] = "Succeeded"
        for cs in status.get("containerStatuses") or []:
            started = ((cs.get("state") or {}).get("running") or {}).get("startedAt", now)
            cs["state"] = {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": started,
                    "finishedAt": now,
                    "containerID": cs.get("containerID", ""),
                }
            }
            cs["ready"] = False
            cs["started"] = False
        self._set_condition(status, "PodReadyToStartContainers", "False", *SANDBOX_STOPPED)
        self._set_condition(status, "Ready", "False", "PodCompleted")
        self._set_condition(status, "ContainersReady", "False", "PodCompleted")
        self._write_pod_status(cur)

    # -------------------------------------------------------------- helpers

    def _write_pod_status(self, cur: dict) -> None:
        """Write a pod's status as a kubelet v1.37 does: every condition and the status carry the generation of the
        spec they were computed from (PodObservedGenerationTracking, GA in 1.35), when the server keeps one. Only the
        conditions the kubelet owns: another writer's (DisruptionTarget from an eviction) keeps the generation it was
        written at (status_manager mergePodStatus keeps them from the old status)."""
        generation = cur["metadata"].get("generation")
        if isinstance(generation, int):
            status = cur.setdefault("status", {})
            status["observedGeneration"] = generation
            for c in status.get("conditions") or ():
                if c.get("type") in KUBELET_CONDITIONS:
                    c["observedGeneration"] = generation
        self.store.update("pods", cur, subresource="status")

    def _set_ready(self, status: dict, pod: dict, ready: bool) -> None:
        # In the kubelet's order (generateAPIPodStatus appends Ready before ContainersReady).
        if ready:
            self._set_condition(status, "Ready", "True")
            self._set_condition(status, "ContainersReady", "True")
        else:
            names = " ".join(c["name"] for c in pod["spec"].get("containers") or [])
            msg = f"containers with unready status: [{names}]"
            self._set_condition(status, "Ready", "False", "ContainersNotReady", msg)
            self._set_condition(status, "ContainersReady", "False", "ContainersNotReady", msg)

    def _set_condition(
        self, status: dict, ctype: str, value: str, reason: str | None = None, message: str | None = None
    ) -> None:
        conds = status.setdefault("conditions", [])
        for c in conds:
            if c.get("type") == ctype:
                if c.get("status") != value:
                    c["status"] = value
                    c["lastTransitionTime"] = self.clock.timestamp()
                if reason:
                    c["reason"] = reason
                else:
                    c.pop("reason", None)
                if message:
                    c["message"] = message
                else:
                    c.pop("message", None)
                return
        c = {"type": ctype, "status": value, "lastProbeTime": None, "lastTransitionTime": self.clock.timestamp()}
        if reason:
            c["reason"] = reason
        if message:
            c["message"] = message
        conds.append(c)

    def _node_ip(self, node: dict) -> str:
        for a in (node.get("status") or {}).get("addresses") or ():
            if a.get("type") == "InternalIP" and a.get("address"):
                return a["address"]
        h = hashlib.sha256(node["metadata"]["name"].encode()).digest()
        return f"10.{h[0] % 64}.{h[1]}.{h[2] % 250 + 2}"

    def _pod_ip(self, node: dict) -> str:
        name = node["metadata"]["name"]
        n = self._ip_next.get(name)
        if n is None:
            n = len(self.cache.pods_by_node.get(name, {})) + 2
        self._ip_next[name] = n + 1
        cidr = (node.get("spec") or {}).get("podCIDR")
        if cidr and re.fullmatch(r"\d+\.\d+\.\d+\.\d+/\d+", cidr):
            a, b, c, _ = cidr.split("/")[0].split(".")
            return f"{a}.{b}.{int(c) + (n // 254) % 4}.{n % 254 + 1}"
        h = hashlib.sha256(name.encode()).digest()
        return f"100.{64 + h[0] % 64}.{h[1]}.{n % 254 + 1}"

    def _cid(self, pod: dict, container: str) -> str:
        return "containerd://" + _hex(pod["metadata"].get("uid", "") + container)


def _exited(container_id: str, started: str, finished: str) -> dict:
    """A container's state.terminated after it failed (exit 1, Error)."""
    return {"exitCode": 1, "reason": "Error", "startedAt": started, "finishedAt": finished, "containerID": container_id}


def _paused(node: dict | None) -> bool:
    """The kubelet acts on no pod: it is stopped, or its container runtime is down."""
    return kubelet_stopped(node) or runtime_down(node)


def _ready_taken_by_node_controller(pod: dict) -> bool:
    """Ready=False with ContainersReady=True: only MarkPodsNotReady writes that (the kubelet derives Ready from
    ContainersReady and the readiness gates, which the simulator's pods do not use)."""
    conds = {c.get("type"): c.get("status") for c in (pod.get("status") or {}).get("conditions") or ()}
    return conds.get("Ready") == "False" and conds.get("ContainersReady") == "True"


def _image_id(container: dict) -> str:
    image = container.get("image", "")
    repo = image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image
    return f"{repo}@sha256:{_hex(image)}"


class _Device:
    __slots__ = ("uuid",)

    def __init__(self, uuid: str | None) -> None:
        self.uuid = uuid


class _NodeUse:
    __slots__ = ("requested", "pods")

    def __init__(self, requested: dict[str, int]) -> None:
        self.requested = requested
        self.pods: dict[str, int] = {}


class _Claims:
    def __init__(self, cache: base.Cache) -> None:
        self._cache = cache

    def get(self, key: tuple[str, str], default: Any = None) -> dict | None:
        return self._cache.get("resourceclaims.resource.k8s.io", key[0], key[1]) or default


class _AdmissionView:
    """The part of the scheduler's ClusterView that kubelet admission reads, from this kubelet's cache:
    claims, device uuids, and what the node's other admitted pods hold through the device plugin."""

    def __init__(self, kubelets: Kubelets, node_name: str, pod: dict) -> None:
        from dragoman.fleet.k8s.extended import is_extended_resource_name
        from dragoman.fleet.k8s.podresources import pod_requests

        self._k = kubelets
        self.claims = _Claims(kubelets.cache)
        uid = pod["metadata"].get("uid")
        requested: dict[str, int] = {}
        for other in kubelets.cache.pods_by_node.get(node_name, {}).values():
            omd = other["metadata"]
            if omd.get("uid") == uid or pod_phase(other) in ("Succeeded", "Failed"):
                continue
            if pod_phase(other) != "Running" and omd.get("uid") not in kubelets._admitted:
                continue
            bridged = {
                m.get("resourceName")
                for m in ((other.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("requestMappings")
                or ()
            }
            for k, v in pod_requests(other).items():
                if is_extended_resource_name(k) and k not in bridged:
                    requested[k] = requested.get(k, 0) + v
        self.nodes = {node_name: _NodeUse(requested)}

    def device(self, key: tuple) -> _Device | None:
        driver, pool, name = key
        uuid = self._k._device_uuid(driver, pool, name)
        return _Device(uuid) if uuid else None


def admission_has_bridge(node: dict) -> bool:
    from dragoman.sim.controllers.admission import has_bridge

    return has_bridge(node)
