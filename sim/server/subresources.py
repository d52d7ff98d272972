"""The five subresources served beside status and finalize: pods/log, scale, pods/binding, pods/eviction and
serviceaccounts/token."""

from __future__ import annotations

import datetime
from typing import Any

from aiohttp import web
from dragoman.fleet.k8s import match_label_selector
from dragoman.fleet.k8s.times import format_time
from dragoman.sim.api import status as st
from dragoman.sim.server.routing import Route
from dragoman.sim.server.users import User, new_token
from dragoman.sim.server.wire import _json
from dragoman.sim.store import ApiError, clone


class SubresourcesMixin:
    """Subresource handlers, over the simulator's store, clock and PDB status controller."""

    def _log(self, request: web.Request, pod: dict) -> web.Response:
        """pods/log: the API server checks the container name (LogLocation's validateContainer), answers 204 with no
        body for a pod no node holds yet (no kubelet to ask), and otherwise relays the kubelet, which wants the
        container started."""
        spec = pod.get("spec") or {}
        containers = [c.get("name") for c in spec.get("containers") or []]
        # VisitContainers' order: init containers, containers, ephemeral containers.
        every = [
            c.get("name")
            for field in ("initContainers", "containers", "ephemeralContainers")
            for c in spec.get(field) or []
        ]
        name = pod["metadata"]["name"]
        container = request.query.get("container") or ""
        if not container:
            if len(containers) == 0:
                raise ApiError(st.bad_request(f"a container name must be specified for pod {name}"))
            if len(containers) > 1:
                raise ApiError(
                    st.bad_request(
                        f"a container name must be specified for pod {name}, choose one of: [{' '.join(every)}]"
                    )
                )
            container = containers[0]
        elif container not in every:
            raise ApiError(st.bad_request(f"container {container} is not valid for pod {name}"))
        if not spec.get("nodeName"):
            # LogLocation returns no location and StreamObject answers an empty stream with 204 No Content.
            return web.Response(status=204)
        statuses = {c.get("name"): c for c in (pod.get("status") or {}).get("containerStatuses") or []}
        state = (statuses.get(container) or {}).get("state") or {}
        if "waiting" in state or not state:
            reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
            raise ApiError(st.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}'))
        text = self.pod_logs(pod, container) if self.pod_logs else ""
        return web.Response(text=text, content_type="text/plain")

    @staticmethod
    def _scale_of(obj: dict) -> dict:
        """The autoscaling/v1 Scale view of a Deployment, ReplicaSet or StatefulSet."""
        md = obj["metadata"]
        sel = (obj.get("spec") or {}).get("selector") or {}
        parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
        for ex in sel.get("matchExpressions") or []:
            op, key, values = ex.get("operator"), ex.get("key"), ",".join(ex.get("values") or [])
            parts.append(
                {
                    "In": f"{key} in ({values})",
                    "NotIn": f"{key} notin ({values})",
                    "Exists": key,
                    "DoesNotExist": f"!{key}",
                }.get(op, key)
            )
        status: dict[str, Any] = {"replicas": int((obj.get("status") or {}).get("replicas", 0))}
        if parts:
            status["selector"] = ",".join(parts)
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in md
            },
            "spec": {"replicas": int((obj.get("spec") or {}).get("replicas", 1))},
            "status": status,
        }

    def _set_scale(self, request: web.Request, route: Route, scale: Any) -> web.Response:
        rt = route.rt
        if not isinstance(scale, dict) or not isinstance(scale.get("spec"), dict):
            raise ApiError(st.bad_request("the body of the request is not a Scale"))
        replicas = scale["spec"].get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise ApiError(
                st.invalid(
                    "autoscaling",
                    "Scale",
                    route.name,
                    [
                        st.cause(
                            "FieldValueInvalid",
                            "spec.replicas",
                            f"Invalid value: {replicas!r}: must be greater than or equal to 0",
                        )
                    ],
                )
            )
        obj = self.store.get(rt, route.namespace or None, route.name)
        if obj is None:
            raise ApiError(st.not_found(rt.group, rt.plural, route.name))
        want_rv = (scale.get("metadata") or {}).get("resourceVersion")
        if want_rv and want_rv != obj["metadata"]["resourceVersion"]:
            raise ApiError(st.conflict(rt.group, rt.plural, route.name))
        obj.setdefault("spec", {})["replicas"] = replicas
        # Recorded as the writer's `scale` subresource entry (owning spec.replicas), as kube-apiserver does.
        new = self.store.update(
            rt,
            obj,
            "scale",
            namespace=route.namespace or None,
            name=route.name,
            dry_run=self._dry_run(request),
            field_manager=self._manager(request),
        )
        return _json(self._scale_of(new))

    def _bind(self, request: web.Request, route: Route, body: Any) -> web.Response:
        if not isinstance(body, dict) or not isinstance(body.get("target"), dict) or not body["target"].get("name"):
            raise ApiError(st.bad_request("a Binding needs target.name"))
        pod = self.store.get("pods", route.namespace, route.name)
        if pod is None:
            raise ApiError(st.not_found("", "pods", route.name))
        node = body["target"]["name"]
        if pod.get("spec", {}).get("nodeName"):
            raise ApiError(
                st.conflict(
                    "",
                    "pods/binding",
                    route.name,
                    f'pod {route.name} is already assigned to node "{pod["spec"]["nodeName"]}"',
                )
            )
        if pod["metadata"].get("deletionTimestamp"):
            raise ApiError(
                st.conflict(
                    "", "pods/binding", route.name, f"pod {route.name} is being deleted, cannot be assigned to a host"
                )
            )
        if self._dry_run(request):
            return _json(st.status(201, "", ""), 201)  # as kube-apiserver: Status{Success, code 201}, no details
        pod["spec"]["nodeName"] = node
        self.store.update("pods", pod, namespace=route.namespace, check_rv=False)
        pod = self.store.get("pods", route.namespace, route.name)
        conds = [c for c in pod.get("status", {}).get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": self.clock.timestamp(),
            }
        )
        pod.setdefault("status", {})["conditions"] = conds
        pod["status"].pop("nominatedNodeName", None)  # ClearingNominatedNodeNameAfterBinding (on in v1.37)
        self.store.update("pods", pod, "status", namespace=route.namespace, check_rv=False, strategy=False)
        return _json(st.status(201, "", ""), 201)  # as kube-apiserver: Status{Success, code 201}, no details

    async def _evict(self, request: web.Request, route: Route, body: Any) -> web.Response:
        if body is not None and not isinstance(body, dict):
            raise ApiError(st.bad_request("the body of the request is not an Eviction"))
        body = body or {}
        options = body.get("deleteOptions") or {}
        dry = self._dry_run(request, options)
        ns, name = route.namespace, route.name
        pod = self.store.get_ref("pods", ns, name)
        if pod is None:
            raise ApiError(st.not_found("", "pods", name))
        if body.get("metadata", {}).get("name") not in (None, "", name):
            raise ApiError(st.bad_request("name in URL does not match name in Eviction object"))
        grace = options.get("gracePeriodSeconds")
        pre = options.get("preconditions")
        # eviction.go canIgnorePDB: a Pending, Succeeded or Failed pod, or one already being deleted, goes without
        # asking its budget (a drain evicts a Pending pod even when the PDB allows no disruption).
        ignore_pdb = pod.get("status", {}).get("phase") in ("Pending", "Succeeded", "Failed")
        if not ignore_pdb and not pod["metadata"].get("deletionTimestamp"):
            pdbs = [
                e.obj
                for e in self.store.entries("poddisruptionbudgets.policy", ns)
                if e.obj.get("spec", {}).get("selector") is not None
                and match_label_selector(e.obj["spec"]["selector"], pod["metadata"].get("labels"))
            ]
            if len(pdbs) > 1:
                raise ApiError(st.eviction_multiple_budgets())
            if pdbs:
                pdb = pdbs[0]
                status = self.pdb_status.compute(pdb)
                healthy_pod = self.pdb_status.pod_ready(pod)
                if not healthy_pod and status["currentHealthy"] >= status["desiredHealthy"]:
                    pass  # an unready pod may go when the budget is met (IfHealthyBudget)
                elif status["disruptionsAllowed"] <= 0:
                    raise ApiError(
                        st.eviction_blocked(
                            pdb["metadata"]["name"], ns, status["desiredHealthy"], status["currentHealthy"]
                        )
                    )
                elif not dry:
                    status["disruptionsAllowed"] -= 1
                    status.setdefault("disruptedPods", {})[name] = self.clock.timestamp()
                    if status["disruptionsAllowed"] == 0:
                        status["conditions"][0].update(
                            status="False", reason="InsufficientPods", lastTransitionTime=self.clock.timestamp()
                        )
                    new = clone(pdb)
                    new["status"] = status
                    self.store.update("poddisruptionbudgets.policy", new, "status", check_rv=False)
        if not dry:
            self._mark_disruption_target(ns, name, pre)
        self.store.delete("pods", ns, name, grace_period_seconds=grace, preconditions=pre, dry_run=dry)
        return _json(st.status(201, "", ""), 201)  # as kube-apiserver: Status{Success, code 201}, no details

    def _mark_disruption_target(self, ns: str, name: str, preconditions: dict | None) -> None:
        """eviction.go addConditionAndDeletePod: before the DELETE, a status update of the latest pod adds
        DisruptionTarget=True (EvictionByEvictionAPI), so a watcher sees why the pod goes and the kubelet ends it
        with that condition (the preconditions are checked first, with the words kube-apiserver uses)."""
        pod = self.store.get("pods", ns, name)
        if pod is None:
            return
        md = pod["metadata"]
        if preconditions:
            uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
            if uid and uid != md.get("uid"):
                raise ApiError(
                    st.conflict(
                        "",
                        "Pod",
                        name,
                        f"the UID in the precondition ({uid}) does not match the UID in record ({md.get('uid')}). "
                        "The object might have been deleted and then recreated",
                    )
                )
            if rv and rv != md.get("resourceVersion"):
                raise ApiError(
                    st.conflict(
                        "",
                        "Pod",
                        name,
                        f"the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in "
                        f"record ({md.get('resourceVersion')}). The object might have been modified",
                    )
                )
        conds = pod.setdefault("status", {}).setdefault("conditions", [])
        want = {"status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}
        cur = next((c for c in conds if c.get("type") == "DisruptionTarget"), None)
        if cur is None:
            conds.append(
                {
                    "type": "DisruptionTarget",
                    **want,
                    "lastProbeTime": None,
                    "lastTransitionTime": self.clock.timestamp(),
                }
            )
        else:
            if cur.get("status") != "True":
                cur["lastTransitionTime"] = self.clock.timestamp()
            cur.update(want)
        new = self.store.update("pods", pod, "status", namespace=ns, check_rv=False)
        if preconditions and preconditions.get("resourceVersion"):
            # The update was this eviction's own: the DELETE's precondition follows it (as kube-apiserver bumps it).
            preconditions["resourceVersion"] = new["metadata"]["resourceVersion"]

    def _token_request(self, request: web.Request, route: Route, body: Any) -> web.Response:
        """serviceaccounts/token: a bearer token for the service account, valid on this simulator for the run."""
        if body is not None and not isinstance(body, dict):
            raise ApiError(st.bad_request("the body of the request is not a TokenRequest"))
        spec = dict((body or {}).get("spec") or {})
        sa = self.store.get("serviceaccounts", route.namespace, route.name)
        if sa is None:
            raise ApiError(st.not_found("", "serviceaccounts", route.name))
        seconds = spec.get("expirationSeconds", 3600)
        if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 600 or seconds > 2**32:
            raise ApiError(
                st.invalid(
                    "authentication.k8s.io",
                    "TokenRequest",
                    route.name,
                    [
                        st.cause(
                            "FieldValueInvalid",
                            "spec.expirationSeconds",
                            "Invalid value: may not specify a duration less than 10 minutes",
                        )
                    ],
                )
            )
        spec["expirationSeconds"] = seconds
        spec.setdefault("audiences", ["https://kubernetes.default.svc.cluster.local"])
        spec.setdefault("boundObjectRef", None)
        name = f"system:serviceaccount:{route.namespace}:{route.name}"
        token = new_token()
        if not self._dry_run(request):
            # Each TokenRequest is a new token for the same identity; earlier ones stay valid, as on a real cluster.
            u = User(name, token, ("system:serviceaccounts", f"system:serviceaccounts:{route.namespace}"))
            self._tokens[token] = u
        expires = format_time(self.clock.now() + datetime.timedelta(seconds=seconds))
        out = {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": route.name, "namespace": route.namespace, "creationTimestamp": self.clock.timestamp()},
            "spec": spec,
            "status": {"token": token, "expirationTimestamp": expires},
        }
        return _json(out, 201)
