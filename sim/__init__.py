"""The embedded cluster: a Kubernetes-API-compatible server on loopback and the controllers that make it behave."""
