"""The DRA CEL environment on cel-python, with Kubernetes semantics where they differ."""
