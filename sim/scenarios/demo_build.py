"""Builds the demo fleet (pinned as demo.yaml): a consistent GKE GPU cluster mid-migration with one case of every
finding.

Run `python -m dragoman.sim.scenarios.demo_build` to rewrite demo.yaml after changing the demo; a test keeps the
two identical. The demo is written story by story (`STORIES`, in the order of demo.yaml): each story is one function
keyed by the finding ids it plants, and a test checks that its objects carry exactly those marks. The stories live in
sim/scenarios/demofleet/ by group (infra: namespaces, nodes, drivers, slices and classes; pools: the workloads pool by
pool; v137: the a100-lab pool; cluster: dashboards, budgets, verdicts, events, RBAC), over the object makers of
objects.py, workloads.py and fleet.py. The pools are
described in `DEMO_README`; `sim.scenarios.demo_marks()` lists where each finding lives.

How the demo marks findings (annotation `dragoman.io/demo-finding`, read only by tests):
- pod findings (pending-*, failed-admission, prepare-failed, running-without-gpu, double-request,
  nodeselector-steering, stale-bridge-claim) mark the pod; stale-bridge-claim also marks the leftover claim;
- node findings (both-stacks, plugin-flapping, no-slices, kubelet-too-old, sharing-capacity-change) mark the node;
  kubelet-skew marks the straggler; pool findings (allocatable-readers, migration-optional) mark every node of the
  pool that shows it;
- dp-targets-dra-pool / driver-targets-dp-pool mark the DaemonSet whose rules reach the wrong pool;
- class and selector findings mark the DeviceClass, claim or template that carries the selector
  (claims made from a template are reported through the template and not marked; scheduler-made claims never are);
- quota findings mark the ResourceQuota, plus the plain claim (quota-claims-now-count) or the blocked pod
  (quota-blocks-claim).
Pending pods' PodScheduled conditions and FailedScheduling Events are the simulated scheduler's own words
(`scheduler_verdicts`: `schedule_one` over the finished fleet), so a live demo's scheduler finds nothing to rewrite.
Pools are "served by" what the scheduler uses (§b): allocatable `nvidia.com/gpu` > 0 → device plugin; a pool
counts as DRA when most of its nodes are DRA-served (a100-serve: 3 of 5 on DRA, plus one both-stacks node and one
flapping node).
"""

from __future__ import annotations

import pathlib

import yaml
from dragoman.fleet.k8s.times import format_time
from dragoman.sim.scenarios.demofleet import cluster, infra, pools, v137
from dragoman.sim.scenarios.demofleet.fleet import Fleet, Story
from dragoman.sim.scenarios.demofleet.objects import SNAPSHOT

# Stories whose pods a running scheduler moves past, the simulator's as kube-scheduler v1.37.2: it deallocates an
# allocation whose binding failed and tries again (the pod then waits for its new device's binding conditions, which
# no fabric agent sets in a live demo), and the timeout story's search (four A100s on one PCIe root) ends in well under
# the DRA filter's 10 s, so the pod gets a verdict of its own. Their pods' PodScheduled conditions are rewritten; the
# findings stay, read from the scheduler's FailedScheduling Events of the earlier attempts (fleet/diagnose/devices.py
# scheduler_said), which the API server keeps for an hour.
LIVE_REWRITTEN_VERDICTS = frozenset({"binding-failed", "filter-timeout"})
# Cases a live simulator keeps rewriting by design, beyond TRANSIENT_FINDINGS (sim/scenarios: what it resolves by
# itself): the flapping device plugin restarts every CRASH_LOOP_SECONDS and the node's allocatable flips with it;
# the crash-looping DRA driver (no-slices) is started again at the end of each 5-minute back-off and exits at once;
# the quota-blocked pod is retried with backoff, and each refusal names the new claim name the apiserver generated.
# The resourceclaim controller retries the claim the API server refuses for admin access: an Event each time.
# allreduce's fabric attach never completes: eight minutes into a live demo (its clock starts at the snapshot) the
# scheduler's 10-minute binding timeout deallocates the claim and tries again (binding-pending, then binding-failed).
LIVE_CHURN_FINDINGS = frozenset(
    {
        "plugin-flapping",
        "no-slices",
        "quota-blocks-claim",
        "binding-pending",
        "binding-failed",
        "filter-timeout",
        "admin-access-forbidden",
    }
)

DEMO_README = """\
| pool (`cloud.google.com/gke-nodepool`) | nodes | GPUs | served by | what it shows |
|---|---|---|---|---|
| `a100-train` | 3 × a2-highgpu-8g | 8 × A100-SXM4-40GB | device plugin (GPU Operator) | Deployment, StatefulSet and Jobs on `nvidia.com/gpu`; pods steered by `nvidia.com/gpu.product`; an 8-GPU Job pending for lack of free GPUs; the `ml-training` quota |
| `l4-inference` | 3 × g2-standard-48 | 4 × L4 | device plugin (standalone chart `nvdp`) | time-slicing ×4 on one node (allocatable 16) |
| `t4-batch` | 2 × n1-standard-8 | 1 × T4 | device plugin (`nvdp`) | a small plain pool where the device plugin is fine; one node cordoned, a pod pending behind it |
| `l4-serve` | 2 × g2-standard-48 | 4 × L4 | device plugin (GPU Operator) | the clean pool to migrate: a Deployment on `nvidia.com/gpu` (4 of 8 GPUs) and no disruption budget (the switch drains the whole pool at once); `dragoman migrate --pool l4-serve --yes` switches it to DRA end to end |
| `l4-dev` | 1 × g2-standard-8 | 1 × L4 | both | the DRA driver rolled out to a device-plugin pool too early |
| `h100-dra` | 4 × a3-highgpu-8g | 8 × H100 80GB | DRA driver v0.4.0 | `nvidia.com/gpu` pods served through the bridge (claims, `extendedResourceClaimStatus`), claim templates, a driver crash-looping (no slices), a driver not ready (prepare fails), a stale bridge claim, quota rejecting the bridge claim |
| `a100-serve` | 5 × a2-ultragpu-8g | 8 × A100-SXM4-80GB | mid-migration | 3 nodes on DRA (one with kubelet v1.35, running a GPU pod without its GPU), one autoscaled node running both stacks, one with a crash-looping device plugin (a pod rejected at admission) |
| `a100-mig` | 2 × a2-ultragpu-8g | 56 × MIG 1g.10gb | DRA driver | `nvidia.com/mig-1g.10gb` pods through the bridge via a MIG DeviceClass |

Plus two `system` nodes (e2-standard-8) for the GPU Operator and the DRA driver's controller. DeviceClasses: the
chart's `gpu.nvidia.com` (serves `nvidia.com/gpu`), `mig.nvidia.com`, `mig-1g.10gb.nvidia.com` (serves
`nvidia.com/mig-1g.10gb`), an older too-broad `nvidia-gpu` also naming `nvidia.com/gpu`, and `h100-low-index`,
whose selector still reads the retired `index`. Users (tokens made per run, in the kubeconfig): `admin` (system:masters),
`viewer` (read-only), `no-evict` (everything but evictions).
"""


# The demo, story by story, in the order its objects are written (the order is part of demo.yaml).
STORIES: tuple[Story, ...] = infra.STORIES + pools.STORIES + v137.STORIES + cluster.STORIES


def build() -> list[dict]:
    """Every story in turn: the demo's objects."""
    f = Fleet()
    for story in STORIES:
        story.build(f)
    return f.d.objects


# The simulator's users, written as the SimulatorConfig document that heads demo.yaml (sim/scenario.py reads it).
# No tokens: the simulator makes them per run and only the kubeconfig it writes carries them (issue 19).
USERS = [
    {"name": "admin", "groups": ["system:masters"]},
    {"name": "viewer", "groups": ["dragoman:viewers"]},
    {"name": "no-evict", "groups": ["dragoman:operators"]},
]


def simulator_config() -> dict:
    # The clock starts at the snapshot the stories are written against (objects.SNAPSHOT), so a live demo meets them
    # at the ages `check --demo` reads: allreduce's fabric attach, two minutes old, waits; it does not meet the
    # scheduler's 10-minute binding timeout days late.
    return {
        "apiVersion": "sim.dragoman.io/v1",
        "kind": "SimulatorConfig",
        "startTime": format_time(SNAPSHOT),
        "users": [dict(u) for u in USERS],
    }


def write(path: pathlib.Path | None = None) -> pathlib.Path:
    path = path or pathlib.Path(__file__).with_name("demo.yaml")
    docs = build()
    header = (
        "# The dragoman demo fleet, generated by sim/scenarios/demo_build.py — edit that file, then run\n"
        "# python -m dragoman.sim.scenarios.demo_build\n"
    )
    lst = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": docs}
    path.write_text(
        header
        + yaml.safe_dump(simulator_config(), sort_keys=False, width=120)
        + "---\n"
        + yaml.safe_dump(lst, sort_keys=False, width=120, allow_unicode=True)
    )
    return path


if __name__ == "__main__":
    print(write())
