"""The controllers that make the simulated fleet behave: scheduler, kubelets, DaemonSets, workloads, drivers."""

from __future__ import annotations

from typing import Any


def default_controllers(sim: Any, *, scheduler: bool = True) -> list:
    """Every controller of a behaving cluster, in the order to register them with `sim.add_controller`.

    The scheduler comes from sim/controllers/scheduler.py; without it (`scheduler=False`) pods stay unbound
    unless they name their node (daemon pods are bound by their controller and still run).
    """
    from dragoman.sim.controllers.daemonsets import DaemonSets
    from dragoman.sim.controllers.devicetaints import DeviceTaintEviction
    from dragoman.sim.controllers.dra_plugin import DraKubeletPlugin
    from dragoman.sim.controllers.fabric import FabricManager
    from dragoman.sim.controllers.gpu_operator import GpuOperator
    from dragoman.sim.controllers.kubelet import Kubelets
    from dragoman.sim.controllers.nodelifecycle import NodeLeases, NodeLifecycle, TaintEviction
    from dragoman.sim.controllers.podgc import PodGC
    from dragoman.sim.controllers.workloads import Workloads

    controllers: list = [GpuOperator(sim), DaemonSets(sim), Workloads(sim)]
    if scheduler:
        try:
            from dragoman.sim.controllers import scheduler as scheduler_mod
        except ImportError:
            scheduler_mod = None
        factory = getattr(scheduler_mod, "Scheduler", None)
        if factory is not None:
            controllers.append(factory(sim))
    controllers += [Kubelets(sim), DraKubeletPlugin(sim), FabricManager(sim)]
    # Heartbeats and kube-controller-manager's node lifecycle and taint eviction (sim/controllers/nodelifecycle.py),
    # its pod garbage collector for pods left on a node that is gone (sim/controllers/podgc.py), and its device taint
    # eviction (sim/controllers/devicetaints.py).
    controllers += [NodeLeases(sim), NodeLifecycle(sim), TaintEviction(sim), PodGC(sim), DeviceTaintEviction(sim)]
    return controllers
