// Command dragoman-cri is a container runtime that needs no images: one per simulated node, serving the kubelet's
// CRI on a unix socket. It wraps the in-tree fake CRI server (k8s.io/cri-client/pkg/fake, formerly
// k8s.io/kubernetes/pkg/kubelet/cri/remote/fake), which keeps sandboxes and containers in memory, and adds three
// things the fake does not do:
//
//  1. It RECORDS what every container was given (image, command, env, devices, CDI device names, mounts,
//     annotations, labels, its pod) and how it ended, into a JSON file (--record) that tests read.
//  2. A container EXITS ON REQUEST: `POST /exit?namespace=N&pod=P&container=C&code=K` on the control socket
//     (and the whole runtime goes down on request: `POST /down` fails every CRI call until `POST /up`)
//     (--control), or by itself when its env says DRAGOMAN_EXIT_AFTER=<Go duration> (and DRAGOMAN_EXIT_CODE=<n>,
//     default 0): a Job completes, a crash loop (restartPolicy Always, code 1) can be played. The kubelet sees the
//     exit through its ordinary relist (ListContainers, ContainerStatus), as it would from containerd.
//  3. It is the node's SUPERVISOR: a container whose image (without tag or digest) and container name match a
//     --supervise rule starts that rule's host program when the container starts; the program is stopped (SIGTERM,
//     SIGKILL after 10 s) when the container stops, exits or is removed, and when the program ends by itself the
//     container exits with the program's exit code (a killed device plugin is a crashed container, and the kubelet
//     restarts it under the DaemonSet's restartPolicy).
//
// It also plays the node's faults for its DaemonSets' pods (sim.dragoman.io/pod-faults: crash at start, crash every
// N seconds, never pass a probe), read from the API with the node's identity: faults.go.
//
// Contract with the supervised programs (the project's device plugin and DRA kubelet plugin,
// controlplane/cmd/dragoman-device-plugin and controlplane/cmd/dragoman-dra-plugin):
//
//   - They inherit this process's environment, which `dragoman sim serve --real-kubelets` sets per node:
//     DRAGOMAN_NODE=<node name>; DRAGOMAN_NODE_DEVICES=<the node's devices.json, written by
//     sim.controlplane.nodedevices.write_node_devices from the scenario: the data the Python agent publishes>;
//     KUBECONFIG=<the node's kubeconfig, client certificate system:node:<name> from the run's CA>;
//     DRAGOMAN_KUBELET_ROOT=<the kubelet's --root-dir, /var/lib/kubelet in the node's mount namespace>.
//     The supervisor adds DRAGOMAN_CONTAINER_ID, DRAGOMAN_POD_NAMESPACE, DRAGOMAN_POD_NAME, DRAGOMAN_POD_UID.
//   - They run in this process's mount namespace, which is the node's (shared with its kubelet): the device-plugin
//     directory /var/lib/kubelet/device-plugins/, /var/lib/kubelet/plugins_registry/ and /var/lib/kubelet/plugins/
//     are the node's own.
//   - Their stdout and stderr go to <--log-dir>/<program>.log (appended across restarts).
//   - They exit cleanly (code 0) on SIGTERM; any other exit is the container's crash.
//
// Nothing here runs an image: a container is a record and, at most, a host program of the project's.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"dragoman.dev/controlplane/internal/nodedevices"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	kubeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

// rule maps a container (image repository and container name, each a path.Match glob) to a host program.
type rule struct {
	Image     string
	Container string
	Exec      string
}

type rules []rule

func (r *rules) String() string { return fmt.Sprint(*r) }

func (r *rules) Set(v string) error {
	var x rule
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("%q: want image=REPO,container=NAME,exec=PATH", v)
		}
		switch k {
		case "image":
			x.Image = val
		case "container":
			x.Container = val
		case "exec":
			x.Exec = val
		default:
			return fmt.Errorf("%q: unknown key %q (image, container, exec)", v, k)
		}
	}
	if x.Image == "" || x.Exec == "" {
		return fmt.Errorf("%q: image= and exec= are required", v)
	}
	if x.Container == "" {
		x.Container = "*"
	}
	*r = append(*r, x)
	return nil
}

// repository is an image reference without its tag or digest ("nvcr.io/nvidia/k8s-device-plugin").
func repository(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image
}

func (r rules) match(image, container string) string {
	repo := repository(image)
	for _, x := range r {
		okImage, _ := path.Match(x.Image, repo)
		okName, _ := path.Match(x.Container, container)
		if okImage && okName {
			return x.Exec
		}
	}
	return ""
}

// Device, Mount: what the kubelet asked the runtime to give a container.
type Device struct {
	ContainerPath string `json:"containerPath"`
	HostPath      string `json:"hostPath"`
	Permissions   string `json:"permissions,omitempty"`
}

type Mount struct {
	ContainerPath string `json:"containerPath"`
	HostPath      string `json:"hostPath"`
	Readonly      bool   `json:"readonly,omitempty"`
}

// Record is one container as the runtime saw it; the record file holds all of them, removed ones included.
type Record struct {
	ID           string            `json:"id"`
	PodSandboxID string            `json:"podSandboxId"`
	Namespace    string            `json:"namespace"`
	Pod          string            `json:"pod"`
	PodUID       string            `json:"podUid"`
	Name         string            `json:"name"`
	Attempt      uint32            `json:"attempt"`
	Image        string            `json:"image"`
	Command      []string          `json:"command"`
	Args         []string          `json:"args"`
	Env          map[string]string `json:"env"`
	Devices      []Device          `json:"devices"`
	CDIDevices   []string          `json:"cdiDevices"`
	Mounts       []Mount           `json:"mounts"`
	Annotations  map[string]string `json:"annotations"`
	Labels       map[string]string `json:"labels"`
	State        string            `json:"state"` // created, running, exited, removed
	ExitCode     *int32            `json:"exitCode,omitempty"`
	ExitReason   string            `json:"exitReason,omitempty"`
	CreatedAt    string            `json:"createdAt"`
	StartedAt    string            `json:"startedAt,omitempty"`
	FinishedAt   string            `json:"finishedAt,omitempty"`
	// The GPUs the container would see (its NVIDIA_VISIBLE_DEVICES and CDI devices, resolved against the node's
	// devices.json as a CDI-enabled runtime resolves them against NVIDIA's CDI specs).
	VisibleGPUs   []string `json:"visibleGPUs"`
	Supervised    string   `json:"supervised,omitempty"` // the host program started for it
	SupervisedPID int      `json:"supervisedPid,omitempty"`
	// The fault annotations it was started under (faults.go: its pod's, and its node's for its DaemonSet).
	Faults map[string]string `json:"faults,omitempty"`
}

type runtime struct {
	*fake.RemoteRuntime
	node    string
	record  string
	logDir  string
	rules   rules
	mu      sync.Mutex
	records map[string]*Record
	order   []string
	procs   map[string]*exec.Cmd // container ID -> its supervised program
	stopped map[string]bool      // container IDs whose program we are stopping (its exit is not a crash)
	timers  map[string]*time.Timer
	faults  *faultReader // the node's faults for its DaemonSets' pods (nil: none)
	down    atomic.Bool  // POST /down: every CRI call fails until POST /up
}

// downUnary, downStream: while the runtime is down (POST /down), the kubelet's CRI calls fail as a refused
// connection does.
func (r *runtime) downUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if r.down.Load() {
		return nil, status.Error(codes.Unavailable, "dragoman-cri: the container runtime is down (POST /up)")
	}
	return handler(ctx, req)
}

func (r *runtime) downStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if r.down.Load() {
		return status.Error(codes.Unavailable, "dragoman-cri: the container runtime is down (POST /up)")
	}
	return handler(srv, ss)
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// save writes the record file atomically; the caller holds r.mu.
func (r *runtime) save() {
	out := struct {
		Node       string    `json:"node"`
		Containers []*Record `json:"containers"`
	}{Node: r.node, Containers: make([]*Record, 0, len(r.order))}
	for _, id := range r.order {
		out.Containers = append(out.Containers, r.records[id])
	}
	data, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		log.Printf("record: %v", err)
		return
	}
	tmp := r.record + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		log.Printf("record: %v", err)
		return
	}
	if err := os.Rename(tmp, r.record); err != nil {
		log.Printf("record: %v", err)
	}
}

func (r *runtime) CreateContainer(ctx context.Context, req *kubeapi.CreateContainerRequest) (*kubeapi.CreateContainerResponse, error) {
	resp, err := r.RemoteRuntime.CreateContainer(ctx, req)
	if err != nil {
		return nil, err
	}
	cfg, sb := req.GetConfig(), req.GetSandboxConfig()
	rec := &Record{
		ID:           resp.ContainerId,
		PodSandboxID: req.GetPodSandboxId(),
		Namespace:    sb.GetMetadata().GetNamespace(),
		Pod:          sb.GetMetadata().GetName(),
		PodUID:       sb.GetMetadata().GetUid(),
		Name:         cfg.GetMetadata().GetName(),
		Attempt:      cfg.GetMetadata().GetAttempt(),
		Image:        cfg.GetImage().GetImage(),
		Command:      cfg.GetCommand(),
		Args:         cfg.GetArgs(),
		Env:          map[string]string{},
		Devices:      []Device{},
		CDIDevices:   []string{},
		Mounts:       []Mount{},
		Annotations:  cfg.GetAnnotations(),
		Labels:       cfg.GetLabels(),
		State:        "created",
		CreatedAt:    now(),
	}
	for _, e := range cfg.GetEnvs() {
		rec.Env[e.GetKey()] = string(e.GetValue())
	}
	for _, d := range cfg.GetDevices() {
		rec.Devices = append(rec.Devices, Device{d.GetContainerPath(), d.GetHostPath(), d.GetPermissions()})
	}
	for _, d := range cfg.GetCDIDevices() {
		rec.CDIDevices = append(rec.CDIDevices, d.GetName())
	}
	for _, m := range cfg.GetMounts() {
		rec.Mounts = append(rec.Mounts, Mount{m.GetContainerPath(), m.GetHostPath(), m.GetReadonly()})
	}
	rec.VisibleGPUs = visibleGPUs(rec.Env["NVIDIA_VISIBLE_DEVICES"], rec.CDIDevices)
	// A log file where the kubelet looks for it (`kubectl logs` reads it), in the CRI log format.
	if dir, p := sb.GetLogDirectory(), cfg.GetLogPath(); dir != "" && p != "" {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err == nil {
			stamp := time.Now().UTC().Format(time.RFC3339Nano)
			line := fmt.Sprintf("%s stdout F dragoman-cri: container %s of %s/%s created (no image is run)\n",
				stamp, rec.Name, rec.Namespace, rec.Pod)
			// The one program whose output dragoman reads (the migration's canary runs `nvidia-smi -L`): played
			// with the GPUs the container was given.
			if strings.Contains(strings.Join(append(append([]string{}, rec.Command...), rec.Args...), " "), "nvidia-smi") {
				for i, uuid := range rec.VisibleGPUs {
					line += fmt.Sprintf("%s stdout F GPU %d: NVIDIA GPU (UUID: %s)\n", stamp, i, uuid)
				}
				if len(rec.VisibleGPUs) == 0 {
					line += fmt.Sprintf("%s stdout F No devices were found\n", stamp)
				}
			}
			_ = os.WriteFile(full, []byte(line), 0o644)
			r.RuntimeService.Lock()
			if c, ok := r.RuntimeService.Containers[resp.ContainerId]; ok {
				c.LogPath = full
			}
			r.RuntimeService.Unlock()
		}
	}
	r.mu.Lock()
	if _, seen := r.records[rec.ID]; !seen {
		r.order = append(r.order, rec.ID)
	}
	r.records[rec.ID] = rec
	r.save()
	r.mu.Unlock()
	return resp, nil
}

func (r *runtime) StartContainer(ctx context.Context, req *kubeapi.StartContainerRequest) (*kubeapi.StartContainerResponse, error) {
	id := req.GetContainerId()
	r.mu.Lock()
	rec := r.records[id]
	r.mu.Unlock()
	var program string
	var faults map[string]string
	if rec != nil {
		program = r.rules.match(rec.Image, rec.Name)
		faults = r.faults.forPod(rec.Namespace, rec.Pod) // read before r.mu: an API call
	}
	resp, err := r.RemoteRuntime.StartContainer(ctx, req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec == nil {
		return resp, nil
	}
	rec.State, rec.StartedAt = "running", now()
	rec.Faults = map[string]string{}
	for _, k := range []string{faultCrashAtStart, faultCrashLoop, faultNotReady} {
		if v := faults[k]; v != "" {
			rec.Faults[k] = v
		}
	}
	if faults[faultCrashAtStart] == "true" {
		// It exits as it starts: nothing it would run (its supervised program) ever runs.
		r.exitLocked(id, 1, "")
		r.save()
		return resp, nil
	}
	if after := crashLoopAfter(faults); after > 0 {
		r.timers[id] = time.AfterFunc(after, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.exitLocked(id, 1, "")
			r.save()
		})
	}
	if program != "" {
		if err := r.startProgram(id, rec, program); err != nil {
			// The container "ran" a program that could not start: it exits at once, as a failed entrypoint does.
			log.Printf("supervise %s: %v", id, err)
			r.exitLocked(id, 127, "StartError")
		}
	}
	if after := rec.Env["DRAGOMAN_EXIT_AFTER"]; after != "" {
		if d, err := time.ParseDuration(after); err == nil {
			code, _ := strconv.Atoi(rec.Env["DRAGOMAN_EXIT_CODE"])
			r.timers[id] = time.AfterFunc(d, func() {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.exitLocked(id, int32(code), "")
			})
		}
	}
	r.save()
	return resp, nil
}

// startProgram runs a supervised host program for container id; the caller holds r.mu.
func (r *runtime) startProgram(id string, rec *Record, program string) error {
	logf, err := os.OpenFile(filepath.Join(r.logDir, filepath.Base(program)+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(program)
	cmd.Env = append(os.Environ(),
		"DRAGOMAN_CONTAINER_ID="+id,
		"DRAGOMAN_POD_NAMESPACE="+rec.Namespace,
		"DRAGOMAN_POD_NAME="+rec.Pod,
		"DRAGOMAN_POD_UID="+rec.PodUID,
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Ended with this process even if it is killed: the kernel sends SIGKILL to the child when we die.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(logf, "--- %s dragoman-cri starts %s for container %s of %s/%s\n", now(), program, rec.Name, rec.Namespace, rec.Pod)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	r.procs[id] = cmd
	rec.Supervised, rec.SupervisedPID = program, cmd.Process.Pid
	go func() {
		err := cmd.Wait()
		logf.Close()
		code := int32(0)
		if ee, ok := err.(*exec.ExitError); ok {
			code = int32(ee.ExitCode())
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int32(ws.Signal())
			}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.procs[id] == cmd {
			delete(r.procs, id)
		}
		if r.stopped[id] {
			delete(r.stopped, id)
			return
		}
		// The program ended by itself: the container exits with its code (a crash when not 0).
		r.exitLocked(id, code, "")
		r.save()
	}()
	return nil
}

// stopProgram ends container id's program (SIGTERM, SIGKILL after 10 s) and waits for it; the caller holds r.mu,
// which is released while waiting.
func (r *runtime) stopProgram(id string) {
	cmd := r.procs[id]
	if cmd == nil {
		return
	}
	r.stopped[id] = true
	delete(r.procs, id)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
				close(done)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	r.mu.Unlock()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
	}
	r.mu.Lock()
}

// exitLocked marks a running container exited with code; the caller holds r.mu.
func (r *runtime) exitLocked(id string, code int32, reason string) {
	if t := r.timers[id]; t != nil {
		t.Stop()
		delete(r.timers, id)
	}
	if reason == "" {
		reason = "Completed"
		if code != 0 {
			reason = "Error"
		}
	}
	r.RuntimeService.Lock()
	c, ok := r.RuntimeService.Containers[id]
	if ok && c.State == kubeapi.ContainerState_CONTAINER_RUNNING {
		c.State = kubeapi.ContainerState_CONTAINER_EXITED
		c.ExitCode = code
		c.Reason = reason
		c.FinishedAt = time.Now().UnixNano()
	} else {
		ok = false
	}
	r.RuntimeService.Unlock()
	if !ok {
		return
	}
	if rec := r.records[id]; rec != nil {
		rec.State, rec.ExitCode, rec.ExitReason, rec.FinishedAt = "exited", &code, reason, now()
	}
	r.stopProgram(id)
}

func (r *runtime) StopContainer(ctx context.Context, req *kubeapi.StopContainerRequest) (*kubeapi.StopContainerResponse, error) {
	id := req.GetContainerId()
	r.mu.Lock()
	r.stopProgram(id)
	if t := r.timers[id]; t != nil {
		t.Stop()
		delete(r.timers, id)
	}
	r.mu.Unlock()
	// A stopped container exits as one killed by its stop signal would (the fake leaves the code at 0).
	r.RuntimeService.Lock()
	wasRunning := false
	if c, ok := r.RuntimeService.Containers[id]; ok && c.State == kubeapi.ContainerState_CONTAINER_RUNNING {
		wasRunning = true
		c.ExitCode, c.Reason = 137, "Error"
	}
	r.RuntimeService.Unlock()
	resp, err := r.RemoteRuntime.StopContainer(ctx, req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if rec := r.records[id]; rec != nil && rec.State == "running" && wasRunning {
		code := int32(137)
		rec.State, rec.ExitCode, rec.ExitReason, rec.FinishedAt = "exited", &code, "Stopped", now()
		r.save()
	}
	r.mu.Unlock()
	return resp, nil
}

func (r *runtime) RemoveContainer(ctx context.Context, req *kubeapi.RemoveContainerRequest) (*kubeapi.RemoveContainerResponse, error) {
	id := req.GetContainerId()
	r.mu.Lock()
	r.stopProgram(id)
	r.mu.Unlock()
	resp, err := r.RemoteRuntime.RemoveContainer(ctx, req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if rec := r.records[id]; rec != nil {
		rec.State = "removed"
		r.save()
	}
	r.mu.Unlock()
	return resp, nil
}

func (r *runtime) StopPodSandbox(ctx context.Context, req *kubeapi.StopPodSandboxRequest) (*kubeapi.StopPodSandboxResponse, error) {
	// A sandbox stopped stops its containers (a real runtime kills them with the sandbox).
	r.RuntimeService.Lock()
	var ids []string
	for id, c := range r.RuntimeService.Containers {
		if c.SandboxID == req.GetPodSandboxId() && c.State == kubeapi.ContainerState_CONTAINER_RUNNING {
			ids = append(ids, id)
		}
	}
	r.RuntimeService.Unlock()
	for _, id := range ids {
		if _, err := r.StopContainer(ctx, &kubeapi.StopContainerRequest{ContainerId: id}); err != nil {
			log.Printf("stop sandbox %s: container %s: %v", req.GetPodSandboxId(), id, err)
		}
	}
	return r.RemoteRuntime.StopPodSandbox(ctx, req)
}

// visibleGPUs are the GPU (or MIG) UUIDs a container is given: the entries of its NVIDIA_VISIBLE_DEVICES that are
// UUIDs, and its CDI devices resolved with the node's devices.json ($DRAGOMAN_NODE_DEVICES) by the plugins' own
// reading of it (internal/nodedevices: nvidia.com/gpu=<uuid or index>, k8s.gpu.nvidia.com/device=<device name>).
func visibleGPUs(env string, cdi []string) []string {
	seen := map[string]bool{}
	out := []string{}
	add := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for _, v := range strings.Split(env, ",") {
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "GPU-") || strings.HasPrefix(v, "MIG-") {
			add(strings.SplitN(v, "::", 2)[0])
		}
	}
	if len(cdi) == 0 {
		return out
	}
	doc, err := nodedevices.Read(os.Getenv("DRAGOMAN_NODE_DEVICES"), "")
	if err != nil {
		log.Printf("devices.json: %v", err)
		return out
	}
	for _, name := range cdi {
		add(doc.UUIDOfCDIName(name))
	}
	return out
}

// exitRequest ends the running containers that match (namespace, pod, container) with code.
func (r *runtime) exitRequest(namespace, pod, container string, code int32) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var hit []string
	for _, id := range r.order {
		rec := r.records[id]
		if rec.State != "running" || rec.Namespace != namespace || rec.Pod != pod || (container != "" && rec.Name != container) {
			continue
		}
		r.exitLocked(id, code, "")
		hit = append(hit, id)
	}
	if len(hit) > 0 {
		r.save()
	}
	return hit
}

func (r *runtime) serveControl(socket string) (*http.Server, error) {
	_ = os.Remove(socket)
	l, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/record", func(w http.ResponseWriter, _ *http.Request) {
		r.mu.Lock()
		recs := make([]*Record, 0, len(r.order))
		for _, id := range r.order {
			recs = append(recs, r.records[id])
		}
		data, _ := json.Marshal(map[string]any{"node": r.node, "containers": recs})
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	})
	// POST /down: every CRI call fails (Unavailable) until POST /up, as a containerd that is down or unreachable
	// refuses the kubelet; containers, records and supervised programs stay as they are.
	for p, down := range map[string]bool{"/down": true, "/up": false} {
		mux.HandleFunc(p, func(w http.ResponseWriter, req *http.Request) {
			if req.Method != http.MethodPost {
				http.Error(w, "POST /down or /up", http.StatusMethodNotAllowed)
				return
			}
			r.down.Store(down)
			log.Printf("container runtime %s on request", map[bool]string{true: "down", false: "up"}[down])
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"down": down})
		})
	}
	mux.HandleFunc("/exit", func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			http.Error(w, "POST /exit?namespace=N&pod=P[&container=C][&code=K]", http.StatusMethodNotAllowed)
			return
		}
		q := req.URL.Query()
		code, err := strconv.Atoi(q.Get("code"))
		if q.Get("code") == "" {
			code, err = 0, nil
		}
		if err != nil || q.Get("namespace") == "" || q.Get("pod") == "" {
			http.Error(w, "POST /exit?namespace=N&pod=P[&container=C][&code=K]", http.StatusBadRequest)
			return
		}
		hit := r.exitRequest(q.Get("namespace"), q.Get("pod"), q.Get("container"), int32(code))
		if len(hit) == 0 {
			http.Error(w, "no running container matches", http.StatusNotFound)
			return
		}
		sort.Strings(hit)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"exited": hit})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return srv, nil
}

func main() {
	var (
		socket  = flag.String("socket", "", "unix socket the kubelet's --container-runtime-endpoint names")
		record  = flag.String("record", "", "JSON file of every container's configuration and state")
		control = flag.String("control", "", "unix socket of the control API (GET /record, POST /exit)")
		logDir  = flag.String("log-dir", ".", "folder of the supervised programs' logs")
		node    = flag.String("node", os.Getenv("DRAGOMAN_NODE"), "node name (for the record)")
		imageFs = flag.String("image-fs", "/var/lib/kubelet", "mount point the runtime reports for images and containers")
		sup     rules
	)
	flag.Var(&sup, "supervise", "image=REPO,container=NAME,exec=PATH (globs; repeatable)")
	flag.Parse()
	if *socket == "" || *record == "" {
		fmt.Fprintln(os.Stderr, "dragoman-cri: --socket and --record are required")
		os.Exit(2)
	}
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)

	f := fake.NewFakeRemoteRuntime()
	f.RuntimeService.FakeStatus = &kubeapi.RuntimeStatus{Conditions: []*kubeapi.RuntimeCondition{
		{Type: kubeapi.RuntimeReady, Status: true},
		{Type: kubeapi.NetworkReady, Status: true},
	}}
	f.RuntimeService.FakeLinuxConfiguration = &kubeapi.LinuxRuntimeConfiguration{CgroupDriver: kubeapi.CgroupDriver_CGROUPFS}
	// An image "pulled" has an ID and a size (the kubelet refuses an image without them); it takes no room.
	f.ImageService.SetFakeImageSize(1 << 20)
	// The image and container filesystems are the kubelet's root dir (the eviction manager asks which device).
	fsUsage := func() []*kubeapi.FilesystemUsage {
		return []*kubeapi.FilesystemUsage{{
			Timestamp:  time.Now().UnixNano(),
			FsId:       &kubeapi.FilesystemIdentifier{Mountpoint: *imageFs},
			UsedBytes:  &kubeapi.UInt64Value{Value: 0},
			InodesUsed: &kubeapi.UInt64Value{Value: 0},
		}}
	}
	f.ImageService.SetFakeFilesystemUsage(fsUsage())
	f.ImageService.SetFakeContainerFilesystemUsage(fsUsage())
	r := &runtime{
		RemoteRuntime: f,
		node:          *node,
		record:        *record,
		logDir:        *logDir,
		rules:         sup,
		records:       map[string]*Record{},
		procs:         map[string]*exec.Cmd{},
		stopped:       map[string]bool{},
		timers:        map[string]*time.Timer{},
		faults:        newFaultReader(*node),
	}
	r.mu.Lock()
	r.save()
	r.mu.Unlock()

	_ = os.Remove(*socket)
	l, err := net.Listen("unix", *socket)
	if err != nil {
		log.Fatalf("listen %s: %v", *socket, err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(r.downUnary), grpc.StreamInterceptor(r.downStream))
	kubeapi.RegisterRuntimeServiceServer(srv, r)
	kubeapi.RegisterImageServiceServer(srv, r)
	go func() { _ = srv.Serve(l) }()
	var ctl *http.Server
	if *control != "" {
		if ctl, err = r.serveControl(*control); err != nil {
			log.Fatalf("control %s: %v", *control, err)
		}
	}
	// The fake remembers every call it was asked, without bound: forget them now and then.
	go func() {
		for range time.Tick(30 * time.Second) {
			r.RuntimeService.Lock()
			r.RuntimeService.Called = r.RuntimeService.Called[:0]
			r.RuntimeService.Unlock()
			r.ImageService.Lock()
			r.ImageService.Called = r.ImageService.Called[:0]
			r.ImageService.Unlock()
		}
	}()
	log.Printf("dragoman-cri for node %q serving %s (%d supervise rules)", *node, *socket, len(sup))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	// Every supervised program ends with the runtime.
	r.mu.Lock()
	ids := make([]string, 0, len(r.procs))
	for id := range r.procs {
		ids = append(ids, id)
	}
	for _, id := range ids {
		r.stopProgram(id)
	}
	r.mu.Unlock()
	srv.Stop()
	if ctl != nil {
		_ = ctl.Close()
		_ = os.Remove(*control)
	}
	_ = os.Remove(*socket)
}
