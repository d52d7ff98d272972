"""dragoman: walk a GPU fleet from the NVIDIA device plugin to Kubernetes DRA."""

__version__ = "0.1.0"
