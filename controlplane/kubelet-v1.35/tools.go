//go:build tools

// Package kubelet135 pins kubelet v1.35.4 (`dragoman controlplane build` compiles k8s.io/kubernetes/cmd/kubelet
// from this module); the blank import keeps `go mod tidy` from dropping it.
package kubelet135

import (
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
