"""The controllers that make the simulated fleet behave: scheduler, kubelets, DaemonSets, workloads, drivers."""
