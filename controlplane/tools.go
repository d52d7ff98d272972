//go:build tools

// Package controlplane pins the upstream control plane that dragoman builds from source.
// The blank imports keep `go mod tidy` from dropping the modules whose commands
// `dragoman controlplane build` compiles (main packages cannot be imported; their app packages can).
package controlplane

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
