"""Which mechanism serves a node's GPUs: the ownership values and the rule that decides them.

How ownership is decided, in order:
- a pod is a device plugin's or a DRA driver's (fleet/gpustack.py: images, labels, Helm and GitOps owners);
- a node's mechanism is `decide_mechanism` below, on its allocatable `nvidia.com/gpu`, whether a plugin pod runs or
  flaps there, and how many devices its ResourceSlices publish (fleet/model.py `_build_node` gathers those inputs,
  and shows "migrating" while a dragoman step is in progress there, fleet/migration.py);
- a pool's ownership is its nodes' when they agree, else "mixed"; what the pool is meant to be on is `_target` in
  fleet/pools.py (the mechanism most of its GPU nodes use alone).
"""

from __future__ import annotations

GPU = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"

# Ownership values. "migrating" is shown when a dragoman migration step is in progress and nothing is wrong.
DEVICE_PLUGIN = "device-plugin"
DRA = "dra"
BOTH = "both"
NONE = "none"
FLAPPING = "flapping"
MIGRATING = "migrating"
OWNERSHIPS = (DEVICE_PLUGIN, DRA, BOTH, NONE, FLAPPING, MIGRATING)


def decide_mechanism(allocatable_gpu: int, plugin_running: bool, plugin_flapping: bool, dra_devices: int) -> str:
    """The mechanism that serves nvidia.com/gpu on a node, decided on allocatable as the scheduler does (dra-facts §b).

    allocatable > 0 → the device plugin serves it; 0 or absent with published devices → DRA. A running plugin pod
    alongside published devices is `both` even in the seconds before allocatable catches up; a plugin that keeps
    restarting on a node with devices is `flapping` (allocatable, and with it the mechanism, flips).
    """
    plugin = allocatable_gpu > 0 or plugin_running
    if dra_devices > 0:
        if plugin_flapping:
            return FLAPPING
        if plugin:
            return BOTH
        return DRA
    if plugin:
        return DEVICE_PLUGIN
    return NONE
