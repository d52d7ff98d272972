"""kube-apiserver's in-tree mutating admission for pods, as v1.37.2 runs it by default: ServiceAccount
(plugin/pkg/admission/serviceaccount), Priority and DefaultTolerationSeconds.

Admission runs after the field manager has recorded the request, so nothing it adds appears in managedFields (the
store calls admit_pod after update_managed_fields), and before the strategy's PrepareForCreate and validation."""

from __future__ import annotations

from collections.abc import Callable

from dragoman.sim.api import status as st

SERVICE_ACCOUNT_VOLUME = "kube-api-access"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
# serviceaccount.WarnOnlyBoundTokenExpirationSeconds: 1 h + 7 s, so a token older than an hour is recognisable.
TOKEN_EXPIRATION_SECONDS = 3607
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


class Refused(Exception):
    """An admission plugin's refusal; `status` is the Status the server answers with."""

    def __init__(self, status: dict) -> None:
        super().__init__(status.get("message", ""))
        self.status = status


_NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
_UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}


def token_volume(name: str) -> dict:
    """The projected volume TokenVolumeSource() describes: a bound token, the cluster's CA, the namespace."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [
                            {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                        ]
                    }
                },
            ],
        },
    }


def default_tolerations(spec: dict) -> None:
    """DefaultTolerationSeconds: tolerate not-ready and unreachable for 300 s unless the pod already tolerates them
    (an empty key or effect tolerates every key or effect). On create and update of the pod itself."""
    tolerations = spec.get("tolerations") or []
    for default in (_NOT_READY, _UNREACHABLE):
        if not any(
            isinstance(t, dict)
            and t.get("key") in (default["key"], None, "")
            and t.get("effect") in ("NoExecute", None, "")
            for t in tolerations
        ):
            tolerations.append(dict(default))
    spec["tolerations"] = tolerations


def _priority(op: str, spec: dict, old_spec: dict | None) -> None:
    """Priority admission without PriorityClasses: a pod without one gets priority 0 and PreemptLowerPriority;
    an update that drops them keeps the old values (they are immutable)."""
    if op == "UPDATE" and old_spec is not None:
        for key in ("priority", "preemptionPolicy"):
            if spec.get(key) is None and old_spec.get(key) is not None:
                spec[key] = old_spec[key]
        return
    if spec.get("priority") is None and not spec.get("priorityClassName"):
        spec["priority"] = 0
    if spec.get("preemptionPolicy") is None:
        spec["preemptionPolicy"] = "PreemptLowerPriority"


def _mount_service_account_token(spec: dict, suffix: Callable[[], str]) -> None:
    """mountServiceAccountToken: every container without a mount at the token path gets one, of the existing
    kube-api-access-* volume or of a new one with a generated suffix."""
    volume_name = next(
        (
            v.get("name")
            for v in spec.get("volumes") or ()
            if str(v.get("name", "")).startswith(SERVICE_ACCOUNT_VOLUME + "-")
        ),
        None,
    )
    has_volume = volume_name is not None
    if volume_name is None:
        volume_name = f"{SERVICE_ACCOUNT_VOLUME}-{suffix()}"
    needs_volume = False
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or ():
            mounts = c.get("volumeMounts") or []
            if any(m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                continue
            mounts.append({"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH})
            c["volumeMounts"] = mounts
            needs_volume = True
    if not has_volume and needs_volume:
        spec["volumes"] = [*(spec.get("volumes") or []), token_volume(volume_name)]


def taint_new_node(node: dict) -> None:
    """TaintNodesByCondition (plugin/pkg/admission/nodetaint, on by default): every Node is created with the
    not-ready NoSchedule taint, so nothing schedules there before the node lifecycle controller sees it Ready and
    takes the taint off. Not when loading a scenario (those nodes have been up for a while)."""
    taints = node.setdefault("spec", {}).setdefault("taints", [])
    if not any(t.get("key") == "node.kubernetes.io/not-ready" and t.get("effect") == "NoSchedule" for t in taints):
        taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})


def admit_pod(
    op: str,
    pod: dict,
    old: dict | None,
    *,
    service_account: Callable[[str, str], dict | None],
    suffix: Callable[[], str],
) -> None:
    """The mutating admission of a pod write (op CREATE or UPDATE), in place. A pod whose ServiceAccount does not
    exist is refused (403), as the plugin's lookup refuses it."""
    spec = pod.setdefault("spec", {})
    md = pod.get("metadata") or {}
    old_spec = (old or {}).get("spec") if old else None
    if op == "CREATE" and MIRROR_POD_ANNOTATION not in (md.get("annotations") or {}):
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = "default"
            spec["serviceAccount"] = "default"
        ns, name = md.get("namespace", ""), spec["serviceAccountName"]
        sa = service_account(ns, name)
        if sa is None:
            raise Refused(
                st.forbidden(
                    "",
                    "pods",
                    md.get("name", ""),
                    f'error looking up service account {ns}/{name}: serviceaccount "{name}" not found',
                )
            )
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            automount = sa.get("automountServiceAccountToken")
        if automount is None or automount:
            _mount_service_account_token(spec, suffix)
        if not spec.get("imagePullSecrets") and sa.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [{"name": s.get("name")} for s in sa["imagePullSecrets"]]
    _priority(op, spec, old_spec)
    default_tolerations(spec)


def admit_priority(spec: dict) -> None:
    """Priority admission of a new pod's spec (a scenario generator writes what it would have given)."""
    _priority("CREATE", spec, None)


def loaded_pod(pod: dict) -> None:
    """A pod of a scenario file, loaded as if it had been stored long ago: what admission gives every stored pod
    (its service account's name, priority, the default tolerations). The token volume is the file's to hold: a
    scenario states its volumes as a cluster stored them."""
    spec = pod.setdefault("spec", {})
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"] = "default"
    _priority("CREATE", spec, None)
    default_tolerations(spec)


def service_accounts_named(objects: list[dict]) -> set[tuple[str, str]]:
    """(namespace, name) of every ServiceAccount other than `default` a pod or pod template names. The admission above
    refuses a pod whose service account does not exist, so a scenario's controllers could never make their pods: the
    loaders (the embedded store's and sim/controlplane/loader.py's) create the ones a scenario leaves out."""
    out: set[tuple[str, str]] = set()
    for obj in objects:
        spec = obj.get("spec") or {}
        pod_spec = (
            spec
            if obj.get("kind") == "Pod"
            else (spec.get("template") or {}).get("spec")
            or (spec.get("jobTemplate") or {}).get("spec", {}).get("template", {}).get("spec")
        )
        if isinstance(pod_spec, dict):
            sa = pod_spec.get("serviceAccountName") or pod_spec.get("serviceAccount")
            if sa and sa != "default":
                out.add(((obj.get("metadata") or {}).get("namespace") or "default", sa))
    return out
