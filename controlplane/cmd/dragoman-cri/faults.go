package main

// A node's faults for the pods of its DaemonSets: the scenario's one contract with the Python node agents
// (sim/controllers/base.py: POD_FAULTS, node_pod_faults, pod_faults), played here under a real kubelet. The Node
// carries `sim.dragoman.io/pod-faults` = {"<DaemonSet name>": {"<fault annotation>": "<value>"}}; whichever pod that
// DaemonSet makes on the node plays them (a fresh pod of the real DaemonSet controller too). Read from the API with
// the node's own identity (the Node authorizer lets a node read itself and the pods bound to it) at every container
// start, so a fault put on or lifted while the node runs is played from the next start on.
//
// What applies under a real kubelet:
//   - crash-at-start "true": the container exits (code 1) as it starts, its supervised program never runs (a DRA
//     driver that crash-loops publishes nothing); the kubelet restarts it after its own back-off.
//   - crash-loop-seconds N: each start of the container runs N seconds, then exits (code 1) — its program stopped,
//     so the device plugin leaves; the kubelet's back-off (none the first time, then 10 s doubling, or the node's
//     maxContainerRestartPeriod) decides when it runs again. The one meaning, which the Python kubelet plays too:
//     sim/controllers/base.py CRASH_LOOP_SECONDS (read here at each start only; a fault put on a running container
//     is played from its next start).
//   - not-ready "true": the container runs but every exec probe fails (ExecSync exits 1); a container without a
//     readiness probe is ready under a real kubelet whatever the fault says.
// The pod's own fault annotations (the same keys, on the pod) apply too, the node's winning, as pod_faults merges them.

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	kubeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const (
	podFaultsAnnotation = "sim.dragoman.io/pod-faults"
	faultCrashAtStart   = "sim.dragoman.io/crash-at-start"
	faultCrashLoop      = "sim.dragoman.io/crash-loop-seconds"
	faultNotReady       = "sim.dragoman.io/not-ready"
)

// faultReader reads a pod's faults from the API; nil (no KUBECONFIG) plays none.
type faultReader struct {
	client kubernetes.Interface
	node   string
}

func newFaultReader(node string) *faultReader {
	path := os.Getenv("KUBECONFIG")
	if path == "" || node == "" {
		return nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		log.Printf("faults: %v (none are played)", err)
		return nil
	}
	cfg.Timeout = 5 * time.Second
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Printf("faults: %v (none are played)", err)
		return nil
	}
	return &faultReader{client: c, node: node}
}

// forPod: the fault annotations that apply to pod namespace/name on this node (its own, and the node's for the
// DaemonSet that owns it); empty when it has none or the API cannot be read (said in the log).
func (f *faultReader) forPod(namespace, name string) map[string]string {
	out := map[string]string{}
	if f == nil {
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pod, err := f.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		log.Printf("faults of %s/%s: %v", namespace, name, err)
		return out
	}
	for k, v := range pod.Annotations {
		out[k] = v
	}
	owner := ""
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "DaemonSet" {
			owner = ref.Name
		}
	}
	if owner == "" {
		return out
	}
	node, err := f.client.CoreV1().Nodes().Get(ctx, f.node, metav1.GetOptions{})
	if err != nil {
		log.Printf("faults of node %s: %v", f.node, err)
		return out
	}
	raw := node.Annotations[podFaultsAnnotation]
	if raw == "" {
		return out
	}
	var byDS map[string]map[string]any
	if err := json.Unmarshal([]byte(raw), &byDS); err != nil {
		log.Printf("faults of node %s: %s is not {DaemonSet: {annotation: value}}: %v", f.node, podFaultsAnnotation, err)
		return out
	}
	for k, v := range byDS[owner] {
		switch x := v.(type) {
		case string:
			out[k] = x
		case float64:
			out[k] = strconv.FormatInt(int64(x), 10)
		}
	}
	return out
}

// crashLoopAfter is N of a crash-loop-seconds fault (0: none).
func crashLoopAfter(faults map[string]string) time.Duration {
	n, err := strconv.Atoi(faults[faultCrashLoop])
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// ExecSync: a probe (or `kubectl exec`) of a container under a not-ready fault fails; any other succeeds, as the
// fake does.
func (r *runtime) ExecSync(ctx context.Context, req *kubeapi.ExecSyncRequest) (*kubeapi.ExecSyncResponse, error) {
	r.mu.Lock()
	rec := r.records[req.GetContainerId()]
	notReady := rec != nil && rec.Faults[faultNotReady] == "true"
	r.mu.Unlock()
	if notReady {
		return &kubeapi.ExecSyncResponse{ExitCode: 1, Stderr: []byte("not ready (sim.dragoman.io/not-ready)\n")}, nil
	}
	return r.RemoteRuntime.ExecSync(ctx, req)
}
