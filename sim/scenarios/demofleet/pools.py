"""The demo's workloads pool by pool: training, the bridge, a100-serve, MIG, the device-plugin pools, research, and
the quotas."""

from __future__ import annotations

from dragoman.sim.scenarios.demofleet.fleet import REG, VLLM, Fleet, Story, pending_status, pool_selector
from dragoman.sim.scenarios.demofleet.objects import add_finding, meta, ts
from dragoman.sim.scenarios.demofleet.verdicts import VERDICT
from dragoman.sim.scenarios.demofleet.workloads import container


def _ml_training(f: Fleet) -> None:
    """ml-training: the A100 pool on the device plugin, and a plain claim in a namespace with a GPU quota."""
    d, w, events = f.d, f.w, f.events
    a1, a2, a3 = f.names("a100-train")
    h1 = f.names("h100-dra")[0]
    _, _, bert = w.deployment(
        "bert-finetune",
        "ml-training",
        created=ts(days=12),
        replicas=2,
        containers=[container("trainer", f"{REG}/training/bert-finetune:2026.11.2", cpu="12", memory="96Gi", gpu=4)],
        placements=[a1, a2],
        node_selector={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
        labels={"team": "nlp"},
    )
    for p in bert:
        add_finding(p, "nodeselector-steering")
    w.statefulset(
        "llama-pretrain",
        "ml-training",
        created=ts(days=9),
        containers=[container("megatron", "nvcr.io/nvidia/nemo:25.09", cpu="24", memory="320Gi", gpu=4)],
        placements=[a1, a2, a3],
        node_selector=pool_selector("a100-train"),
    )
    w.job(
        "tokenize-shards",
        "ml-training",
        created=ts(hours=7),
        containers=[container("tokenize", f"{REG}/training/tokenizer:1.8.0", cpu="16", memory="64Gi", gpu=3)],
        node=a3,
        node_selector=pool_selector("a100-train"),
    )
    _, sweep8 = w.job(
        "eval-sweep-8gpu",
        "ml-training",
        created=ts(hours=2),
        containers=[container("eval", f"{REG}/training/eval-harness:0.9.4", cpu="32", memory="128Gi", gpu=8)],
        node=None,
        node_selector=pool_selector("a100-train"),
        pod_kwargs=dict(pending_status(ts(hours=2)), finding="pending-insufficient"),
    )
    events.append((sweep8, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=3), 31))

    # A plain claim of the class that serves nvidia.com/gpu, in a namespace with a quota on requests.nvidia.com/gpu.
    shared = d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": meta(
                "shared-h100",
                "ml-training",
                created=ts(days=6),
                finding="quota-claims-now-count",
                finalizers=["resource.kubernetes.io/delete-protection"],
                kind="ResourceClaim",
            ),
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "allocationMode": "ExactCount",
                                "count": 1,
                                "selectors": [
                                    {
                                        "cel": {
                                            "expression": (
                                                "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 "
                                                "80GB HBM3'"
                                            )
                                        }
                                    }
                                ],
                            },
                        }
                    ]
                }
            },
            "status": {},
        }
    )
    nb = d.pod(
        "notebook-alice",
        "ml-training",
        created=ts(days=6),
        node=h1,
        containers=[
            container(
                "notebook",
                "quay.io/jupyter/pytorch-notebook:cuda12-2026-11-03",
                cpu="8",
                memory="64Gi",
                claims=[{"name": "gpu"}],
            )
        ],
        resource_claims=[{"name": "gpu", "resourceClaimName": "shared-h100"}],
        labels={"app.kubernetes.io/name": "notebook", "owner": "alice"},
    )
    shared["status"] = {
        "allocation": d.allocation(h1, "gpu", ["gpu-4"], ts(days=6)),
        "reservedFor": [{"resource": "pods", "name": "notebook-alice", "uid": nb["metadata"]["uid"]}],
    }


def _bridge(f: Fleet) -> None:
    """ml-inference on the H100s through the bridge: a stale claim, a template equal to limits, a double request, a
    failed prepare."""
    d, w, events = f.d, f.w, f.events
    h1, h2, h3, _h4 = f.names("h100-dra")
    _, _, llm = w.deployment(
        "llm-serving",
        "ml-inference",
        created=ts(days=20),
        replicas=5,
        containers=[
            container(
                "vllm",
                VLLM,
                cpu="16",
                memory="200Gi",
                gpu=2,
                args=["--model", "meta-llama/Llama-3.3-70B-Instruct", "--tensor-parallel-size", "2"],
            )
        ],
        placements=[h1, h1, h2, h2, None],
        node_selector=pool_selector("h100-dra"),
        labels={"tier": "online"},
        pod_kwargs=[
            {},
            {},
            {},
            {},
            dict(pending_status(ts(minutes=2)), created=ts(minutes=4), finding="stale-bridge-claim"),
        ],
    )
    for p, node, devs in zip(
        llm, (h1, h1, h2, h2), (["gpu-0", "gpu-1"], ["gpu-2", "gpu-3"], ["gpu-0", "gpu-1"], ["gpu-2", "gpu-3"])
    ):
        d.bridge_claim(p, node, devs, created=p["metadata"]["creationTimestamp"])
    # Left from an earlier cycle whose binding failed: allocated, never reserved, the pod still Pending.
    d.bridge_claim(llm[4], h1, ["gpu-6", "gpu-7"], created=ts(minutes=3), reserved=False, finding="stale-bridge-claim")
    events.append((llm[4], "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=2), 2))

    one_gpu = d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": meta(
                "one-gpu",
                "ml-inference",
                created=ts(days=30),
                finding="claim-equivalent-to-limits",
                kind="ResourceClaimTemplate",
            ),
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {
                                    "deviceClassName": "gpu.nvidia.com",
                                    "allocationMode": "ExactCount",
                                    "count": 1,
                                },
                            }
                        ]
                    }
                }
            },
        }
    )
    _, _, emb = w.deployment(
        "embedder",
        "ml-inference",
        created=ts(days=14),
        replicas=2,
        containers=[
            container("embed", f"{REG}/inference/embedder:3.2.0", cpu="4", memory="32Gi", claims=[{"name": "gpu"}])
        ],
        placements=[h2, h2],
        node_selector=pool_selector("h100-dra"),
        resource_claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
    )
    for p, dev in zip(emb, ("gpu-4", "gpu-5")):
        d.template_claim(p, "gpu", one_gpu, h2, [dev], created=p["metadata"]["creationTimestamp"])
    _, _, rr = w.deployment(
        "reranker",
        "ml-inference",
        created=ts(days=5),
        replicas=1,
        containers=[
            container(
                "rerank", f"{REG}/inference/reranker:1.4.1", cpu="4", memory="32Gi", gpu=1, claims=[{"name": "gpu"}]
            )
        ],
        placements=[h2],
        node_selector=pool_selector("h100-dra"),
        resource_claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        pod_kwargs=[{"finding": "double-request"}],
    )
    d.bridge_claim(rr[0], h2, ["gpu-6"], created=rr[0]["metadata"]["creationTimestamp"])
    d.template_claim(rr[0], "gpu", one_gpu, h2, ["gpu-7"], created=rr[0]["metadata"]["creationTimestamp"])

    # h3 is full with pods prepared before its DRA plugin stopped being ready, so a retried pod cannot land there.
    _, _, summ = w.deployment(
        "summarizer",
        "ml-inference",
        created=ts(days=11),
        replicas=3,
        containers=[
            container(
                "vllm",
                VLLM,
                cpu="12",
                memory="160Gi",
                gpu=2,
                args=["--model", "mistralai/Mistral-Small-3.2-24B-Instruct-2506", "--tensor-parallel-size", "2"],
            )
        ],
        placements=[h3, h3, h3],
        node_selector=pool_selector("h100-dra"),
        labels={"tier": "batch"},
    )
    for p, devs in zip(summ, (["gpu-1", "gpu-2"], ["gpu-3", "gpu-4"], ["gpu-5", "gpu-6"])):
        d.bridge_claim(p, h3, devs, created=p["metadata"]["creationTimestamp"])
    _, _, ocr = w.deployment(
        "ocr-pipeline",
        "ml-inference",
        created=ts(days=10),
        replicas=1,
        containers=[container("ocr", f"{REG}/inference/ocr:5.0.1", cpu="4", memory="24Gi", gpu=1)],
        placements=[h3],
        node_selector=pool_selector("h100-dra"),
        labels={"tier": "batch"},
    )
    d.bridge_claim(ocr[0], h3, ["gpu-7"], created=ocr[0]["metadata"]["creationTimestamp"])
    prep_msg = (
        "Failed to prepare dynamic resources: NodePrepareResources failed for ResourceClaim {claim}: "
        "rpc error: code = Unavailable desc = error reading from server: EOF"
    )
    _, _, scorer = w.deployment(
        "batch-scorer",
        "ml-inference",
        created=ts(minutes=25),
        replicas=1,
        containers=[container("score", f"{REG}/inference/scorer:2.0.3", cpu="8", memory="48Gi", gpu=1)],
        placements=[h3],
        node_selector=pool_selector("h100-dra"),
        ready=0,
        pod_kwargs=[
            {
                "phase": "Pending",
                "container_state": {"waiting": {"reason": "ContainerCreating"}},
                "finding": "prepare-failed",
            }
        ],
    )
    sc = d.bridge_claim(scorer[0], h3, ["gpu-0"], created=ts(minutes=25))
    events.append(
        (
            scorer[0],
            "FailedPrepareDynamicResources",
            prep_msg.format(claim=sc["metadata"]["name"]),
            "kubelet",
            ts(minutes=1),
            14,
        )
    )


def _a100_serve(f: Fleet) -> None:
    """a100-serve, mid-migration: a pod running without its GPU, a pod rejected at admission."""
    d, w, events = f.d, f.w, f.events
    m1, m2, m3, m4, m5 = f.names("a100-serve")
    _, _, serve_pods = w.deployment(
        "llm-serving-a100",
        "ml-inference",
        created=ts(days=18),
        replicas=4,
        containers=[
            container(
                "vllm",
                VLLM,
                cpu="16",
                memory="160Gi",
                gpu=4,
                args=["--model", "Qwen/Qwen3-32B", "--tensor-parallel-size", "4"],
            )
        ],
        placements=[m1, m1, m2, m5],
        node_selector=pool_selector("a100-serve"),
        labels={"tier": "online"},
        pod_kwargs=[{}, {}, {"created": ts(days=3)}, {}],
    )
    for p, node, devs in (
        (serve_pods[0], m1, [f"gpu-{i}" for i in range(4)]),
        (serve_pods[1], m1, [f"gpu-{i}" for i in range(4, 8)]),
        (serve_pods[3], m5, [f"gpu-{i}" for i in range(4)]),
    ):
        d.bridge_claim(p, node, devs, created=p["metadata"]["creationTimestamp"])
    # Rolled after the pool moved to DRA: the scheduler placed its pod through the bridge on the node whose kubelet
    # (v1.35) predates it. That kubelet admits the pod and runs it without the GPU, its claim allocated and reserved
    # but never prepared (what a real kubelet v1.35.4 does). A pod started on the device plugin would not do: the
    # kubelet keeps a device-plugin GPU with its pod after the plugin leaves.
    _, _, ranker = w.deployment(
        "ranker-legacy",
        "ml-inference",
        created=ts(days=40),
        replicas=1,
        containers=[container("ranker", f"{REG}/inference/ranker:0.7.9", cpu="4", memory="24Gi", gpu=1)],
        placements=[m3],
        node_selector=pool_selector("a100-serve"),
        pod_kwargs=[{"finding": "running-without-gpu", "created": ts(days=2)}],
    )
    d.bridge_claim(ranker[0], m3, ["gpu-0"], created=ranker[0]["metadata"]["creationTimestamp"])
    adm_msg = (
        "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, "
        "which is unexpected"
    )
    smoke = d.pod(
        "smoke-test-a100",
        "ml-inference",
        created=ts(minutes=40),
        node=m4,
        phase="Failed",
        restart_policy="Never",
        reason="UnexpectedAdmissionError",
        message=adm_msg,
        containers=[
            container("smoke", "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", cpu="1", memory="1Gi", gpu=1)
        ],
        node_selector=pool_selector("a100-serve"),
        finding="failed-admission",
    )
    events.append((smoke, "UnexpectedAdmissionError", adm_msg, "kubelet", ts(minutes=40), 1))


def _mig(f: Fleet) -> None:
    """MIG through the bridge, and a MIG profile no class serves."""
    d, w, events = f.d, f.w, f.events
    mig1, mig2 = f.names("a100-mig")
    _, _, whisper = w.deployment(
        "whisper-mig",
        "ml-inference",
        created=ts(days=8),
        replicas=6,
        containers=[
            container(
                "whisper",
                f"{REG}/inference/whisper-large-v3:1.1.0",
                cpu="2",
                memory="12Gi",
                gpu=1,
                resource="nvidia.com/mig-1g.10gb",
            )
        ],
        placements=[mig1] * 4 + [mig2] * 2,
        node_selector=pool_selector("a100-mig"),
    )
    for i, p in enumerate(whisper):
        node = mig1 if i < 4 else mig2
        k = i if i < 4 else i - 4
        d.bridge_claim(
            p,
            node,
            [f"gpu-0-mig-19-{k}-1"],
            resource="nvidia.com/mig-1g.10gb",
            device_class="mig-1g.10gb.nvidia.com",
            created=p["metadata"]["creationTimestamp"],
        )
    _, asr = w.job(
        "asr-batch-large",
        "ml-inference",
        created=ts(hours=1),
        containers=[
            container(
                "asr",
                f"{REG}/inference/whisper-large-v3:1.1.0",
                cpu="4",
                memory="40Gi",
                gpu=1,
                resource="nvidia.com/mig-3g.40gb",
            )
        ],
        node=None,
        pod_kwargs=dict(pending_status(ts(hours=1)), finding="pending-unmapped"),
    )
    events.append((asr, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=5), 13))


def _dp_pools(f: Fleet) -> None:
    """Device-plugin pools: L4 (one node time-sliced), T4 (a pod pending behind a cordon), the L4 dev node and
    l4-serve."""
    w, events = f.w, f.events
    l41, l42, l43 = f.names("l4-inference")
    t41, _t42 = f.names("t4-batch")
    (l4d,) = f.names("l4-dev")
    ls1, ls2 = f.names("l4-serve")
    w.deployment(
        "sd-turbo",
        "ml-inference",
        created=ts(days=21),
        replicas=6,
        containers=[container("diffusion", f"{REG}/inference/sd-turbo:2.1", cpu="6", memory="24Gi", gpu=1)],
        placements=[l41, l41, l42, l42, l43, l43],
        node_selector=pool_selector("l4-inference"),
    )
    w.deployment(
        "embed-serve",
        "ml-inference",
        created=ts(days=30),
        replicas=4,
        containers=[container("embedder", f"{REG}/inference/text-embed:3.4", cpu="8", memory="32Gi", gpu=1)],
        placements=[ls1, ls1, ls2, ls2],
        node_selector=pool_selector("l4-serve"),
    )
    w.deployment(
        "dev-sandbox",
        "ml-inference",
        created=ts(days=4),
        replicas=1,
        containers=[container("sandbox", "nvcr.io/nvidia/pytorch:25.10-py3", cpu="4", memory="16Gi", gpu=1)],
        placements=[l4d],
        node_selector=pool_selector("l4-dev"),
    )
    w.job(
        "transcode-daily",
        "batch",
        created=ts(hours=3),
        containers=[container("ffmpeg", f"{REG}/media/ffmpeg-nvenc:7.1", cpu="4", memory="8Gi", gpu=1)],
        node=t41,
        node_selector=pool_selector("t4-batch"),
    )
    _, urgent = w.job(
        "transcode-urgent",
        "batch",
        created=ts(minutes=50),
        containers=[container("ffmpeg", f"{REG}/media/ffmpeg-nvenc:7.1", cpu="4", memory="8Gi", gpu=1)],
        node=None,
        node_selector=pool_selector("t4-batch"),
        pod_kwargs=dict(pending_status(ts(minutes=50)), finding="pending-cordoned"),
    )
    events.append((urgent, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=4), 11))


def _research(f: Fleet) -> None:
    """research: a claim count quota, a selector that matches no device, the bridge's claim rejected."""
    d, w, events = f.d, f.w, f.events
    m5 = f.names("a100-serve")[4]
    h100_80gi = d.add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": meta(
                "h100-80gi", "research", created=ts(days=2), finding="selector-no-match", kind="ResourceClaimTemplate"
            ),
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {
                                    "deviceClassName": "gpu.nvidia.com",
                                    "allocationMode": "ExactCount",
                                    "count": 1,
                                    "selectors": [
                                        {
                                            "cel": {
                                                "expression": (
                                                    "device.attributes['gpu.nvidia.com'].architecture == 'Hopper' && "
                                                    "device.capacity['gpu.nvidia.com'].memory"
                                                    ".compareTo(quantity('80Gi')) >= 0"
                                                )
                                            }
                                        }
                                    ],
                                },
                            }
                        ]
                    }
                }
            },
        }
    )
    _, _, jup = w.deployment(
        "jupyter-gpu",
        "research",
        created=ts(days=3),
        replicas=1,
        containers=[
            container("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2026-11-03", cpu="4", memory="32Gi", gpu=1)
        ],
        placements=[m5],
    )
    d.bridge_claim(jup[0], m5, ["gpu-4"], created=jup[0]["metadata"]["creationTimestamp"])
    _, ev = w.job(
        "llm-eval",
        "research",
        created=ts(hours=5),
        containers=[
            container("eval", f"{REG}/research/lm-eval:0.4.9", cpu="8", memory="64Gi", claims=[{"name": "model"}])
        ],
        node=None,
        node_selector=pool_selector("h100-dra"),
        resource_claims=[{"name": "model", "resourceClaimTemplateName": "h100-80gi"}],
        pod_kwargs=dict(pending_status(ts(hours=5)), finding="pending-selector"),
    )
    d.template_claim(ev, "model", h100_80gi, None, [], created=ts(hours=5))
    events.append((ev, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=6), 42))
    _, sweep = w.job(
        "hparam-sweep-7",
        "research",
        created=ts(minutes=30),
        containers=[container("train", f"{REG}/research/sweeper:2.3.0", cpu="8", memory="48Gi", gpu=1)],
        node=None,
        node_selector=pool_selector("h100-dra"),
        pod_kwargs=dict(pending_status(ts(minutes=29), "SchedulerError"), finding="quota-blocks-claim"),
    )
    events.append((sweep, "FailedScheduling", VERDICT, "default-scheduler", ts(minutes=1), 17))


def _quotas(f: Fleet) -> None:
    """Quotas, with status.used as the quota controller computes it from the pods and claims so far."""
    d = f.d

    def gpu_requests(ns: str) -> int:
        total = 0
        for o in d.objects:
            if (
                o["kind"] == "Pod"
                and o["metadata"]["namespace"] == ns
                and o["status"]["phase"] in ("Pending", "Running")
            ):
                for c in o["spec"]["containers"]:
                    total += int(c["resources"].get("requests", {}).get("nvidia.com/gpu", 0))
            if (
                o["kind"] == "ResourceClaim"
                and o["metadata"].get("namespace") == ns
                and "resource.kubernetes.io/extended-resource-claim" not in o["metadata"].get("annotations", {})
            ):
                for r in o["spec"]["devices"]["requests"]:
                    if r["exactly"]["deviceClassName"] == "gpu.nvidia.com":
                        total += r["exactly"].get("count", 1)
        return total

    def count_claims(ns: str) -> int:
        return sum(1 for o in d.objects if o["kind"] == "ResourceClaim" and o["metadata"]["namespace"] == ns)

    d.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta(
                "gpu-quota", "ml-training", created=ts(days=200), finding="quota-claims-now-count", kind="ResourceQuota"
            ),
            "spec": {"hard": {"requests.nvidia.com/gpu": "40"}},
            "status": {
                "hard": {"requests.nvidia.com/gpu": "40"},
                "used": {"requests.nvidia.com/gpu": str(gpu_requests("ml-training"))},
            },
        }
    )
    d.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta(
                "research-quota", "research", created=ts(days=60), finding="quota-blocks-claim", kind="ResourceQuota"
            ),
            "spec": {"hard": {"count/resourceclaims.resource.k8s.io": "2"}},
            "status": {
                "hard": {"count/resourceclaims.resource.k8s.io": "2"},
                "used": {"count/resourceclaims.resource.k8s.io": str(count_claims("research"))},
            },
        }
    )


# This group's stories, in the order their objects are written.
STORIES: tuple[Story, ...] = (
    Story("ml-training", ("nodeselector-steering", "pending-insufficient", "quota-claims-now-count"), _ml_training),
    Story("bridge", ("claim-equivalent-to-limits", "double-request", "prepare-failed", "stale-bridge-claim"), _bridge),
    Story("a100-serve", ("failed-admission", "running-without-gpu"), _a100_serve),
    Story("mig", ("pending-unmapped",), _mig),
    Story("dp-pools", ("pending-cordoned",), _dp_pools),
    Story("research", ("pending-selector", "quota-blocks-claim", "selector-no-match"), _research),
    Story("quotas", ("quota-blocks-claim", "quota-claims-now-count"), _quotas),
)
