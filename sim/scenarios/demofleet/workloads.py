"""The demo's workload makers: containers, pod templates, and the Deployments, StatefulSets, Jobs and bare pods
the stories run (`Workloads`)."""

from __future__ import annotations

import json

from dragoman.sim.scenarios.demofleet.objects import Demo, meta, owner_ref, sfx, uid
from dragoman.sim.scenarios.podstatus import stored_spec


def container(
    name: str,
    image: str,
    *,
    cpu: str,
    memory: str,
    gpu: int | None = None,
    resource: str = "nvidia.com/gpu",
    claims: list | None = None,
    env: list | None = None,
    command: list | None = None,
    args: list | None = None,
) -> dict:
    req = {"cpu": cpu, "memory": memory}
    lim = {"memory": memory}
    if gpu is not None:
        req[resource] = str(gpu)
        lim[resource] = str(gpu)
    c: dict = {"name": name, "image": image}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if env:
        c["env"] = env
    c["resources"] = {"limits": lim, "requests": req}
    if claims:
        c["resources"]["claims"] = claims
    return c


def template_spec(
    labels: dict,
    containers: list[dict],
    *,
    node_selector: dict | None = None,
    resource_claims: list | None = None,
    restart_policy: str = "Always",
) -> dict:
    spec = stored_spec({"containers": [dict(c) for c in containers], "restartPolicy": restart_policy}, pod=False)
    if node_selector:
        spec["nodeSelector"] = node_selector
    if resource_claims:
        spec["resourceClaims"] = resource_claims
    return {"metadata": {"labels": labels}, "spec": spec}


class Workloads:
    """Deployments → ReplicaSets → Pods, StatefulSets → Pods, Jobs → Pods, with consistent status."""

    def __init__(self, demo: Demo) -> None:
        self.d = demo

    def deployment(
        self,
        name: str,
        ns: str,
        *,
        created: str,
        replicas: int,
        containers: list[dict],
        placements: list[str | None],
        node_selector: dict | None = None,
        resource_claims: list | None = None,
        labels: dict | None = None,
        pod_kwargs: list[dict] | None = None,
        ready: int | None = None,
        annotations: dict | None = None,
    ) -> tuple[dict, dict, list[dict]]:
        app = {"app.kubernetes.io/name": name, **(labels or {})}
        tpl = template_spec(app, containers, node_selector=node_selector, resource_claims=resource_claims)
        dep = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta(
                name,
                ns,
                created=created,
                labels=app,
                annotations={"deployment.kubernetes.io/revision": "1", **(annotations or {})},
                kind="Deployment",
            ),
            "spec": {
                "progressDeadlineSeconds": 600,
                "replicas": replicas,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": tpl,
            },
        }
        n_ready = ready if ready is not None else sum(1 for p in placements if p)
        available = n_ready >= replicas - replicas // 4  # maxUnavailable 25%, rounded down
        dep["metadata"]["generation"] = 1
        dep["status"] = {
            "availableReplicas": n_ready,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True" if available else "False",
                    "lastTransitionTime": created,
                    "lastUpdateTime": created,
                    "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                    "message": "Deployment has minimum availability."
                    if available
                    else "Deployment does not have minimum availability.",
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "lastTransitionTime": created,
                    "lastUpdateTime": created,
                    "reason": "NewReplicaSetAvailable",
                    "message": f'ReplicaSet "{name}-{sfx("rs", ns, name, length=10)}" has successfully progressed.',
                },
            ],
            "observedGeneration": 1,
            "readyReplicas": n_ready,
            "replicas": replicas,
            "updatedReplicas": replicas,
        }
        if n_ready < replicas:
            dep["status"]["unavailableReplicas"] = replicas - n_ready
        if not n_ready:
            del dep["status"]["readyReplicas"], dep["status"]["availableReplicas"]
        self.d.add(dep)
        h = sfx("rs", ns, name, length=10)
        rs_labels = {**app, "pod-template-hash": h}
        rs_tpl = json.loads(json.dumps(tpl))
        rs_tpl["metadata"]["labels"] = dict(rs_labels)
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta(
                f"{name}-{h}",
                ns,
                created=created,
                labels=rs_labels,
                owner=owner_ref(dep),
                annotations={
                    "deployment.kubernetes.io/desired-replicas": str(replicas),
                    "deployment.kubernetes.io/max-replicas": str(replicas + max(1, replicas // 4)),
                    "deployment.kubernetes.io/revision": "1",
                },
                kind="ReplicaSet",
            ),
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app.kubernetes.io/name": name, "pod-template-hash": h}},
                "template": rs_tpl,
            },
            "status": {
                "availableReplicas": n_ready,
                "fullyLabeledReplicas": replicas,
                "observedGeneration": 1,
                "readyReplicas": n_ready,
                "replicas": replicas,
            },
        }
        rs["metadata"]["generation"] = 1
        if not n_ready:
            del rs["status"]["readyReplicas"], rs["status"]["availableReplicas"]
        self.d.add(rs)
        pods = []
        for i, node in enumerate(placements):
            pname = f"{name}-{h}-{sfx('pod', ns, name, i)}"
            kw = dict((pod_kwargs or [{}] * len(placements))[i] or {})
            kw.setdefault("created", created)
            p = self.d.pod(
                pname,
                ns,
                containers=containers,
                node=node,
                labels=rs_labels,
                owner=owner_ref(rs),
                node_selector=node_selector,
                resource_claims=resource_claims,
                generate_name=f"{name}-{h}-",
                **kw,
            )
            pods.append(p)
        return dep, rs, pods

    def statefulset(
        self,
        name: str,
        ns: str,
        *,
        created: str,
        containers: list[dict],
        placements: list[str],
        node_selector: dict | None = None,
    ) -> tuple[dict, list[dict]]:
        app = {"app.kubernetes.io/name": name}
        tpl = template_spec(app, containers, node_selector=node_selector)
        rev = f"{name}-{sfx('sts', ns, name, length=10)}"
        sts = {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta(name, ns, created=created, labels=app, kind="StatefulSet"),
            "spec": {
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                "podManagementPolicy": "Parallel",
                "replicas": len(placements),
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": app},
                "serviceName": name,
                "template": tpl,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            },
            "status": {
                "availableReplicas": len(placements),
                "collisionCount": 0,
                "currentReplicas": len(placements),
                "currentRevision": rev,
                "observedGeneration": 1,
                "readyReplicas": len(placements),
                "replicas": len(placements),
                "updateRevision": rev,
                "updatedReplicas": len(placements),
            },
        }
        sts["metadata"]["generation"] = 1
        self.d.add(sts)
        pods = []
        for i, node in enumerate(placements):
            labels = {
                **app,
                "apps.kubernetes.io/pod-index": str(i),
                "controller-revision-hash": rev,
                "statefulset.kubernetes.io/pod-name": f"{name}-{i}",
            }
            p = self.d.pod(
                f"{name}-{i}",
                ns,
                created=created,
                containers=containers,
                node=node,
                labels=labels,
                owner=owner_ref(sts),
                node_selector=node_selector,
            )
            p["spec"]["hostname"] = f"{name}-{i}"
            p["spec"]["subdomain"] = name
            pods.append(p)
        return sts, pods

    def job(
        self,
        name: str,
        ns: str,
        *,
        created: str,
        containers: list[dict],
        node: str | None,
        node_selector: dict | None = None,
        resource_claims: list | None = None,
        pod_kwargs: dict | None = None,
    ) -> tuple[dict, dict]:
        job_uid = uid("Job", ns, name)
        sel = {"batch.kubernetes.io/controller-uid": job_uid}
        labels = {
            "batch.kubernetes.io/controller-uid": job_uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": job_uid,
            "job-name": name,
        }
        tpl = template_spec(
            labels, containers, node_selector=node_selector, resource_claims=resource_claims, restart_policy="Never"
        )
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta(name, ns, created=created, labels={"app.kubernetes.io/name": name}, kind="Job"),
            "spec": {
                "backoffLimit": 6,
                "completionMode": "NonIndexed",
                "completions": 1,
                "manualSelector": False,
                "parallelism": 1,
                "podReplacementPolicy": "TerminatingOrFailed",
                "selector": {"matchLabels": sel},
                "suspend": False,
                "template": tpl,
            },
            "status": {
                "active": 1,
                "ready": 1 if node and not (pod_kwargs or {}).get("container_state") else 0,
                "startTime": created,
                "terminating": 0,
                "uncountedTerminatedPods": {},
            },
        }
        job["metadata"]["generation"] = 1
        self.d.add(job)
        kw = dict(pod_kwargs or {})
        kw.setdefault("created", created)
        pod = self.d.pod(
            f"{name}-{sfx('job', ns, name)}",
            ns,
            containers=containers,
            node=node,
            labels=labels,
            owner=owner_ref(job),
            node_selector=node_selector,
            resource_claims=resource_claims,
            restart_policy="Never",
            generate_name=f"{name}-",
            **kw,
        )
        return job, pod
