"""What NVIDIA's GPU stack publishes, under the simulator's name: the one copy lives in fleet/nvidia_schema.py.

The app predicts a node's devices before its switch from the same schema the simulator's DRA kubelet plugin
publishes, so both read one module; sim may import fleet, never the other way round.
"""

from dragoman.fleet.nvidia_schema import *  # noqa: F403
from dragoman.fleet.nvidia_schema import _hex  # noqa: F401  (the demo builder derives stable ids with it)
