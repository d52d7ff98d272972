// Command dragoman-dra-plugin plays the kubelet plugin of NVIDIA's DRA driver (driver gpu.nvidia.com)
// for one simulated node, on k8s.io/dynamic-resource-allocation/kubeletplugin — the library NVIDIA's
// driver is built on — without GPUs or NVML.
//
// It publishes the node's devices as ResourceSlices (one pool named after the node) from the devices.json
// dragoman writes (sim/controlplane/nodedevices.py): the same devices, in NVIDIA's attribute schema, that
// the Python DRA agent publishes, so both node halves agree. It registers with the kubelet through the
// kubelet's plugin registry, answers NodePrepareResources with the driver's CDI device names
// (k8s.gpu.nvidia.com/claim=<claim uid>-<device name> from v25.12, as cmd/gpu-kubelet-plugin names them;
// nodedevices.DRACDIDeviceIDs), checkpoints
// prepared claims in its plugin folder (a restarted plugin unprepares what an earlier one prepared), and,
// where a device carries binding conditions, writes them into the allocated claims' status.devices as
// the driver's controller would (devices.json "binding" says with which status; True when it says
// nothing).
//
// Environment:
//
//	DRAGOMAN_NODE                 the node's name (checked against the file; required with publishing)
//	DRAGOMAN_NODE_DEVICES         the node's devices.json (required)
//	KUBECONFIG                    how to reach the API server (required)
//	DRAGOMAN_KUBELET_ROOT         the kubelet's root folder (default /var/lib/kubelet): registration socket in
//	                              <root>/plugins_registry, the DRA socket and checkpoint in <root>/plugins/gpu.nvidia.com
//	DRAGOMAN_DRIVER_SCHEMA        the attribute schema to publish (default: the one devices.json names)
//	DRAGOMAN_UNHEALTHY_FILE       device names or GPU UUIDs to report Unhealthy to the kubelet, one per line
//	                              (default <DRAGOMAN_NODE_DEVICES>.unhealthy; re-read every second)
//	DRAGOMAN_BINDING_KUBECONFIG   credentials for writing claims' binding conditions (default KUBECONFIG)
//
// SIGTERM or SIGINT: it stops serving and exits 0; its slices stay, and the kubelet deletes them once the
// plugin has been unregistered for its wiping delay, as with the real driver.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"

	"dragoman.dev/controlplane/internal/nodedevices"
)

const (
	checkpointName    = "checkpoint.json"
	checkpointVersion = 1
	healthPollEvery   = time.Second
	healthResendEvery = 10 * time.Second
)

// preparedDevice is one device of a prepared claim, as the checkpoint keeps it.
type preparedDevice struct {
	Requests     []string `json:"requests"`
	Pool         string   `json:"pool"`
	Device       string   `json:"device"`
	CDIDeviceIDs []string `json:"cdiDeviceIDs"`
	Shared       bool     `json:"shared,omitempty"`
}

type preparedClaim struct {
	Namespace string           `json:"namespace"`
	Name      string           `json:"name"`
	Devices   []preparedDevice `json:"devices"`
}

type checkpoint struct {
	Version int                      `json:"version"`
	Node    string                   `json:"node"`
	Claims  map[string]preparedClaim `json:"claims"`
}

// bindingOutcome is what the driver's controller writes for one binding condition.
type bindingOutcome struct {
	Status       string  `json:"status"`
	Reason       string  `json:"reason"`
	Message      string  `json:"message"`
	DelaySeconds float64 `json:"delaySeconds"`
}

type driver struct {
	doc           *nodedevices.Doc
	schema        string                        // the attribute schema published, which says the release and so its CDI names
	devices       map[string]resourceapi.Device // by device name
	uuids         map[string]string             // device name -> GPU UUID (parent's for a MIG device)
	checkpointDir string
	unhealthyFile string
	binding       map[string]bindingOutcome
	cancel        context.CancelCauseFunc

	mu       sync.Mutex
	prepared map[string]preparedClaim
}

func (d *driver) checkpointPath() string { return filepath.Join(d.checkpointDir, checkpointName) }

func (d *driver) loadCheckpoint() error {
	d.prepared = map[string]preparedClaim{}
	data, err := os.ReadFile(d.checkpointPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return fmt.Errorf("checkpoint %s is unreadable: %w", d.checkpointPath(), err)
	}
	if cp.Version != checkpointVersion {
		return fmt.Errorf("checkpoint %s has version %d, not %d", d.checkpointPath(), cp.Version, checkpointVersion)
	}
	if cp.Claims != nil {
		d.prepared = cp.Claims
	}
	return nil
}

// saveCheckpoint writes the prepared claims atomically (the caller holds d.mu).
func (d *driver) saveCheckpoint() error {
	data, err := json.MarshalIndent(checkpoint{Version: checkpointVersion, Node: d.doc.Node, Claims: d.prepared}, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.checkpointDir, ".checkpoint-")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	tmp.Close()
	return os.Rename(tmp.Name(), d.checkpointPath())
}

// inUseBy says which other prepared claim holds a device that only one claim may hold.
func (d *driver) inUseBy(claimUID, device string) string {
	for uid, c := range d.prepared {
		if uid == claimUID {
			continue
		}
		for _, dev := range c.Devices {
			if dev.Device == device && !dev.Shared {
				return fmt.Sprintf("%s/%s (%s)", c.Namespace, c.Name, uid)
			}
		}
	}
	return ""
}

func (d *driver) prepare(claim *resourceapi.ResourceClaim) kubeletplugin.PrepareResult {
	uid := string(claim.UID)
	if c, ok := d.prepared[uid]; ok { // idempotent: the kubelet asks again after a restart
		return resultOf(c)
	}
	c := preparedClaim{Namespace: claim.Namespace, Name: claim.Name}
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != d.doc.Driver || r.Pool != d.doc.Pool {
			continue
		}
		dev, ok := d.devices[r.Device]
		if !ok {
			return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s/%s: device %s is not one of node %s's devices", claim.Namespace, claim.Name, r.Device, d.doc.Node)}
		}
		shared := (r.AdminAccess != nil && *r.AdminAccess) || (dev.AllowMultipleAllocations != nil && *dev.AllowMultipleAllocations)
		if !shared {
			if other := d.inUseBy(uid, r.Device); other != "" {
				return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s/%s: device %s is already prepared for claim %s", claim.Namespace, claim.Name, r.Device, other)}
			}
		}
		c.Devices = append(c.Devices, preparedDevice{
			Requests:     []string{r.Request},
			Pool:         r.Pool,
			Device:       r.Device,
			CDIDeviceIDs: nodedevices.DRACDIDeviceIDs(d.schema, uid, r.Device),
			Shared:       shared,
		})
	}
	d.prepared[uid] = c
	if err := d.saveCheckpoint(); err != nil {
		delete(d.prepared, uid)
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("checkpoint claim %s/%s: %w", claim.Namespace, claim.Name, err)}
	}
	log.Printf("prepared claim %s/%s (%s): %s", claim.Namespace, claim.Name, uid, describe(c, d.uuids))
	return resultOf(c)
}

func describe(c preparedClaim, uuids map[string]string) string {
	parts := make([]string, 0, len(c.Devices))
	for _, dev := range c.Devices {
		parts = append(parts, fmt.Sprintf("%s=%s", dev.Device, uuids[dev.Device]))
	}
	return strings.Join(parts, ", ")
}

func resultOf(c preparedClaim) kubeletplugin.PrepareResult {
	res := kubeletplugin.PrepareResult{Devices: []kubeletplugin.Device{}}
	for _, dev := range c.Devices {
		res.Devices = append(res.Devices, kubeletplugin.Device{
			Requests:     dev.Requests,
			PoolName:     dev.Pool,
			DeviceName:   dev.Device,
			CDIDeviceIDs: dev.CDIDeviceIDs,
		})
	}
	return res
}

func (d *driver) PrepareResourceClaims(_ context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		out[claim.UID] = d.prepare(claim)
	}
	return out, nil
}

func (d *driver) UnprepareResourceClaims(_ context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]error, len(claims))
	changed := false
	for _, claim := range claims {
		out[claim.UID] = nil
		if _, ok := d.prepared[string(claim.UID)]; ok {
			delete(d.prepared, string(claim.UID))
			changed = true
			log.Printf("unprepared claim %s/%s (%s)", claim.Namespace, claim.Name, claim.UID)
		}
	}
	if changed {
		if err := d.saveCheckpoint(); err != nil {
			for _, claim := range claims {
				out[claim.UID] = fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	return out, nil
}

func (d *driver) HandleError(_ context.Context, err error, msg string) {
	log.Printf("%s: %v", msg, err)
	if !errors.Is(err, kubeletplugin.ErrRecoverable) && d.cancel != nil {
		d.cancel(fmt.Errorf("%s: %w", msg, err))
	}
}

func (d *driver) readUnhealthy() map[string]bool {
	out := map[string]bool{}
	data, err := os.ReadFile(d.unhealthyFile)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out
}

func (d *driver) healthReport() kubeletplugin.DeviceHealthReport {
	bad := d.readUnhealthy()
	names := make([]string, 0, len(d.devices))
	for n := range d.devices {
		names = append(names, n)
	}
	sort.Strings(names)
	rep := kubeletplugin.DeviceHealthReport{}
	now := time.Now()
	for _, n := range names {
		h := kubeletplugin.HealthStatusHealthy
		if bad[n] || (d.uuids[n] != "" && bad[d.uuids[n]]) {
			h = kubeletplugin.HealthStatusUnhealthy
		}
		rep.Devices = append(rep.Devices, kubeletplugin.DeviceHealth{PoolName: d.doc.Pool, DeviceName: n, Health: h, LastUpdated: now})
	}
	return rep
}

// WatchHealthStatus reports every device's health now, whenever the unhealthy file changes, and within the
// kubelet's staleness window otherwise.
func (d *driver) WatchHealthStatus(ctx context.Context, reports chan<- kubeletplugin.DeviceHealthReport) error {
	last := ""
	lastSent := time.Time{}
	tick := time.NewTicker(healthPollEvery)
	defer tick.Stop()
	for {
		rep := d.healthReport()
		key := fmt.Sprint(rep.Devices != nil, healthKey(rep))
		if key != last || time.Since(lastSent) >= healthResendEvery {
			select {
			case <-ctx.Done():
				return nil
			case reports <- rep:
			}
			last, lastSent = key, time.Now()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func healthKey(rep kubeletplugin.DeviceHealthReport) string {
	var b strings.Builder
	for _, dv := range rep.Devices {
		b.WriteString(dv.DeviceName)
		b.WriteString(string(dv.Health))
	}
	return b.String()
}

// decodeSlices turns devices.json's slices into the publishing library's.
func decodeSlices(raw []json.RawMessage) ([]resourceslice.Slice, error) {
	out := make([]resourceslice.Slice, 0, len(raw))
	for i, r := range raw {
		var s struct {
			Devices        []resourceapi.Device     `json:"devices"`
			SharedCounters []resourceapi.CounterSet `json:"sharedCounters"`
		}
		dec := json.NewDecoder(strings.NewReader(string(r)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("slice %d of devices.json: %w", i, err)
		}
		out = append(out, resourceslice.Slice{Devices: s.Devices, SharedCounters: s.SharedCounters})
	}
	return out, nil
}

// bindingWriter sets the binding conditions of claims allocated on this node's devices, as the driver's
// controller does once a device is attached (KEP-5007).
type bindingWriter struct {
	d      *driver
	client kubernetes.Interface
	done   sync.Map // claim uid -> struct{}
}

func (b *bindingWriter) handle(ctx context.Context, claim *resourceapi.ResourceClaim) {
	if claim.Status.Allocation == nil {
		return
	}
	if _, ok := b.done.Load(claim.UID); ok {
		return
	}
	var want []resourceapi.AllocatedDeviceStatus
	delay := 0.0
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != b.d.doc.Driver || r.Pool != b.d.doc.Pool || len(r.BindingConditions) == 0 {
			continue
		}
		var conds []metav1.Condition
		for _, t := range r.BindingConditions {
			o, ok := b.d.binding[t]
			if !ok {
				o = bindingOutcome{Status: "True", Reason: "Attached", Message: "attached to " + b.d.doc.Node}
			}
			if o.DelaySeconds > delay {
				delay = o.DelaySeconds
			}
			conds = append(conds, metav1.Condition{
				Type: t, Status: metav1.ConditionStatus(o.Status), Reason: o.Reason, Message: o.Message,
				LastTransitionTime: metav1.Now(), ObservedGeneration: claim.Generation,
			})
		}
		for _, t := range r.BindingFailureConditions {
			if o, ok := b.d.binding[t]; ok {
				conds = append(conds, metav1.Condition{
					Type: t, Status: metav1.ConditionStatus(o.Status), Reason: o.Reason, Message: o.Message,
					LastTransitionTime: metav1.Now(), ObservedGeneration: claim.Generation,
				})
			}
		}
		want = append(want, resourceapi.AllocatedDeviceStatus{Driver: r.Driver, Pool: r.Pool, Device: r.Device, Conditions: conds})
	}
	if len(want) == 0 {
		return
	}
	b.done.Store(claim.UID, struct{}{})
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(delay * float64(time.Second))):
		}
		for attempt := 0; attempt < 5; attempt++ {
			cur, err := b.client.ResourceV1().ResourceClaims(claim.Namespace).Get(ctx, claim.Name, metav1.GetOptions{})
			if err != nil || cur.UID != claim.UID || cur.Status.Allocation == nil {
				if err != nil {
					log.Printf("binding conditions of claim %s/%s: %v", claim.Namespace, claim.Name, err)
				}
				return
			}
			cur = cur.DeepCopy()
			kept := cur.Status.Devices[:0]
			for _, s := range cur.Status.Devices {
				mine := false
				for _, w := range want {
					if s.Driver == w.Driver && s.Pool == w.Pool && s.Device == w.Device {
						mine = true
					}
				}
				if !mine {
					kept = append(kept, s)
				}
			}
			cur.Status.Devices = append(kept, want...)
			if _, err = b.client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err == nil {
				log.Printf("claim %s/%s: binding conditions written", claim.Namespace, claim.Name)
				return
			}
			log.Printf("binding conditions of claim %s/%s: %v", claim.Namespace, claim.Name, err)
			time.Sleep(time.Second)
		}
		b.done.Delete(claim.UID)
	}()
}

func (b *bindingWriter) run(ctx context.Context) {
	factory := informers.NewSharedInformerFactory(b.client, 0)
	inf := factory.Resource().V1().ResourceClaims().Informer()
	on := func(obj any) {
		if c, ok := obj.(*resourceapi.ResourceClaim); ok {
			b.handle(ctx, c)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    on,
		UpdateFunc: func(_, obj any) { on(obj) },
	})
	factory.Start(ctx.Done())
}

func clientFrom(path string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.UserAgent = "dragoman-dra-plugin"
	return kubernetes.NewForConfig(cfg)
}

func run() (int, error) {
	node := os.Getenv("DRAGOMAN_NODE")
	devicesPath := os.Getenv("DRAGOMAN_NODE_DEVICES")
	kubeconfig := os.Getenv("KUBECONFIG")
	if devicesPath == "" || kubeconfig == "" {
		return 2, errors.New("DRAGOMAN_NODE_DEVICES and KUBECONFIG must both be set")
	}
	doc, err := nodedevices.Read(devicesPath, node)
	if err != nil {
		return 2, err
	}
	rawSlices, err := doc.Slices(os.Getenv("DRAGOMAN_DRIVER_SCHEMA"))
	if err != nil {
		return 2, err
	}
	slices, err := decodeSlices(rawSlices)
	if err != nil {
		return 2, err
	}
	var binding map[string]bindingOutcome
	if raw, err := os.ReadFile(devicesPath); err == nil {
		var extra struct {
			Binding map[string]bindingOutcome `json:"binding"`
		}
		if err := json.Unmarshal(raw, &extra); err == nil {
			binding = extra.Binding
		}
	}
	root := nodedevices.Env("DRAGOMAN_KUBELET_ROOT", "/var/lib/kubelet")
	d := &driver{
		doc:           doc,
		schema:        nodedevices.Env("DRAGOMAN_DRIVER_SCHEMA", doc.Schema),
		devices:       map[string]resourceapi.Device{},
		uuids:         map[string]string{},
		checkpointDir: filepath.Join(root, "plugins", doc.Driver),
		unhealthyFile: nodedevices.Env("DRAGOMAN_UNHEALTHY_FILE", devicesPath+".unhealthy"),
		binding:       binding,
	}
	hasBinding := false
	for _, s := range slices {
		for _, dev := range s.Devices {
			d.devices[dev.Name] = dev
			for _, key := range []resourceapi.QualifiedName{"uuid", "parentUUID"} {
				if a, ok := dev.Attributes[key]; ok && a.StringValue != nil {
					d.uuids[dev.Name] = *a.StringValue
					break
				}
			}
			if len(dev.BindingConditions) > 0 {
				hasBinding = true
			}
		}
	}
	registry := filepath.Join(root, "plugins_registry")
	for _, dir := range []string{registry, d.checkpointDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return 1, err
		}
	}
	if err := d.loadCheckpoint(); err != nil {
		return 1, err
	}
	client, err := clientFrom(kubeconfig)
	if err != nil {
		return 2, err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d.cancel = cancel

	helper, err := kubeletplugin.Start(ctx, d,
		kubeletplugin.DriverName(doc.Driver),
		kubeletplugin.KubeClient(client),
		kubeletplugin.NodeName(doc.Node),
		kubeletplugin.RegistrarDirectoryPath(registry),
		kubeletplugin.PluginDataDirectoryPath(d.checkpointDir),
	)
	if err != nil {
		if stopped(ctx) {
			return 0, nil
		}
		return 1, fmt.Errorf("start the kubelet plugin: %w", err)
	}
	defer helper.Stop()
	// A node without GPUs publishes nothing, as the Python agent does for a node whose labels name none.
	if len(slices) > 0 {
		if err := helper.PublishResources(ctx, resourceslice.DriverResources{
			Pools: map[string]resourceslice.Pool{doc.Pool: {Slices: slices}},
		}); err != nil {
			if stopped(ctx) {
				return 0, nil
			}
			return 1, fmt.Errorf("publish ResourceSlices: %w", err)
		}
	}
	if hasBinding {
		bc := client
		if p := os.Getenv("DRAGOMAN_BINDING_KUBECONFIG"); p != "" {
			if bc, err = clientFrom(p); err != nil {
				return 2, err
			}
		}
		(&bindingWriter{d: d, client: bc}).run(ctx)
	}
	log.Printf("node %s: driver %s serving %d devices in %d slice(s); registry %s", doc.Node, doc.Driver, len(d.devices), len(slices), registry)
	<-ctx.Done()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return 1, cause
	}
	log.Printf("node %s: stopped", doc.Node)
	return 0, nil
}

// stopped says the plugin was asked to stop (SIGTERM, SIGINT): what fails after that is the stop itself.
func stopped(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled)
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("dragoman-dra-plugin ")
	code, err := run()
	if err != nil {
		log.Print(err)
	}
	os.Exit(code)
}
