// Command dragoman-device-plugin plays NVIDIA's device plugin for one simulated node on the kubelet's
// device-plugin API (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1), without GPUs or NVML.
//
// It serves the node's GPUs from the devices.json dragoman writes (sim/controlplane/nodedevices.py): one
// gRPC server per extended resource (nvidia.com/gpu, or nvidia.com/mig-<profile> under the MIG mixed
// strategy), each registered with the kubelet as NVIDIA's plugin registers it (socket
// nvidia-<name>.sock in the device-plugin folder). Allocate answers as NVIDIA's plugin does with its
// default device-ID strategy (uuid): NVIDIA_VISIBLE_DEVICES is the comma-separated device IDs, and the
// CDI device names are nvidia.com/gpu=<uuid> (cdi-cri strategy: the CDIDevices field; cdi-annotations:
// the annotation cdi.k8s.io/nvidia-device-plugin_<response id>). A time-sliced replica (<uuid>::<n>)
// hands out its GPU's UUID.
//
// Environment:
//
//	DRAGOMAN_NODE                   the node's name (checked against the file)
//	DRAGOMAN_NODE_DEVICES           the node's devices.json (required)
//	DRAGOMAN_KUBELET_ROOT           the kubelet's root folder (default /var/lib/kubelet)
//	DRAGOMAN_DEVICE_PLUGIN_DIR      the kubelet's device-plugin folder (default <DRAGOMAN_KUBELET_ROOT>/device-plugins/)
//	DRAGOMAN_UNHEALTHY_FILE         device IDs or GPU UUIDs to report Unhealthy, one per line
//	                                (default <DRAGOMAN_NODE_DEVICES>.unhealthy); re-read every second and on SIGHUP
//	DRAGOMAN_DEVICE_LIST_STRATEGY   envvar,cdi-cri,cdi-annotations (comma list; default envvar,cdi-cri)
//	DRAGOMAN_DEVICE_ID_STRATEGY     uuid | index (default uuid)
//
// The plugin re-registers when the kubelet restarts (its kubelet.sock is replaced, or our socket is
// removed, as the kubelet's device manager does when it starts). SIGTERM or SIGINT: it stops serving,
// removes its sockets and exits 0. Killed, it leaves its sockets behind as a crashed plugin does.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"dragoman.dev/controlplane/internal/nodedevices"
)

const (
	envvarName        = "NVIDIA_VISIBLE_DEVICES"
	cdiKind           = "nvidia.com/gpu"
	cdiAnnotationKey  = "cdi.k8s.io/nvidia-device-plugin_"
	replicaSeparator  = "::"
	registerTimeout   = 5 * time.Second
	healthPollEvery   = time.Second
	kubeletPollEvery  = time.Second
	registerRetryWait = time.Second
)

type config struct {
	node          string
	devicesPath   string
	dir           string
	unhealthyFile string
	strategies    map[string]bool
	idStrategy    string
}

// plugin serves one extended resource.
type plugin struct {
	pluginapi.UnimplementedDevicePluginServer

	cfg      *config
	resource string
	socket   string // file name in cfg.dir
	devices  []nodedevices.PluginDevice
	byID     map[string]nodedevices.PluginDevice

	mu      sync.Mutex
	health  map[string]string
	changed chan struct{} // closed (and replaced) whenever health changes
	server  *grpc.Server
}

func socketName(resource string) string {
	return "nvidia-" + strings.TrimPrefix(resource, "nvidia.com/") + ".sock"
}

func newPlugin(cfg *config, res nodedevices.PluginResource) *plugin {
	p := &plugin{
		cfg:      cfg,
		resource: res.Resource,
		socket:   socketName(res.Resource),
		devices:  res.Devices,
		byID:     map[string]nodedevices.PluginDevice{},
		health:   map[string]string{},
		changed:  make(chan struct{}),
	}
	for _, d := range res.Devices {
		p.byID[d.ID] = d
		p.health[d.ID] = pluginapi.Healthy
	}
	return p
}

// setUnhealthy marks the devices named (by ID or by the UUID they stand for); the rest are healthy.
func (p *plugin) setUnhealthy(names map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	changed := false
	for _, d := range p.devices {
		want := pluginapi.Healthy
		if names[d.ID] || names[d.UUID] {
			want = pluginapi.Unhealthy
		}
		if p.health[d.ID] != want {
			log.Printf("%s: device %s is now %s", p.resource, d.ID, want)
			p.health[d.ID] = want
			changed = true
		}
	}
	if changed {
		close(p.changed)
		p.changed = make(chan struct{})
	}
}

func (p *plugin) list() ([]*pluginapi.Device, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*pluginapi.Device, 0, len(p.devices))
	for _, d := range p.devices {
		out = append(out, &pluginapi.Device{ID: d.ID, Health: p.health[d.ID]})
	}
	return out, p.changed
}

func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}, nil
}

func (p *plugin) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	for {
		devs, changed := p.list()
		if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
			return err
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-changed:
		}
	}
}

// GetPreferredAllocation prefers the must-include devices, then available ones in the node's order.
func (p *plugin) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, r := range req.ContainerRequests {
		chosen := append([]string(nil), r.MustIncludeDeviceIDs...)
		taken := map[string]bool{}
		for _, id := range chosen {
			taken[id] = true
		}
		available := map[string]bool{}
		for _, id := range r.AvailableDeviceIDs {
			available[id] = true
		}
		for _, d := range p.devices {
			if len(chosen) >= int(r.AllocationSize) {
				break
			}
			if available[d.ID] && !taken[d.ID] {
				chosen = append(chosen, d.ID)
				taken[d.ID] = true
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: chosen})
	}
	return resp, nil
}

func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, r := range req.ContainerRequests {
		var ids []string
		seen := map[string]bool{}
		for _, id := range r.DevicesIds {
			d, ok := p.byID[id]
			if !ok {
				return nil, fmt.Errorf("invalid allocation request for '%s': unknown device: %s", p.resource, id)
			}
			// A replica's ID names its GPU; the container is given the GPU once.
			name := d.UUID
			if p.cfg.idStrategy == "index" {
				name = d.Index
			}
			if !seen[name] {
				seen[name] = true
				ids = append(ids, name)
			}
		}
		c := &pluginapi.ContainerAllocateResponse{}
		if p.cfg.strategies["envvar"] {
			c.Envs = map[string]string{envvarName: strings.Join(ids, ",")}
		}
		names := make([]string, 0, len(ids))
		for _, id := range ids {
			names = append(names, cdiKind+"="+id)
		}
		if p.cfg.strategies["cdi-cri"] {
			for _, n := range names {
				c.CdiDevices = append(c.CdiDevices, &pluginapi.CDIDevice{Name: n})
			}
		}
		if p.cfg.strategies["cdi-annotations"] && len(names) > 0 {
			c.Annotations = map[string]string{cdiAnnotationKey + responseID(): strings.Join(names, ",")}
		}
		log.Printf("%s: Allocate %v -> %v", p.resource, r.DevicesIds, names)
		resp.ContainerResponses = append(resp.ContainerResponses, c)
	}
	return resp, nil
}

func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

func responseID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (p *plugin) path() string { return filepath.Join(p.cfg.dir, p.socket) }

func (p *plugin) serve() error {
	_ = os.Remove(p.path())
	lis, err := net.Listen("unix", p.path())
	if err != nil {
		return fmt.Errorf("listen on %s: %w", p.path(), err)
	}
	s := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(s, p)
	p.server = s
	go func() {
		if err := s.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			log.Printf("%s: serving stopped: %v", p.resource, err)
		}
	}()
	return nil
}

func (p *plugin) stop(removeSocket bool) {
	if p.server != nil {
		p.server.Stop()
		p.server = nil
	}
	if removeSocket {
		_ = os.Remove(p.path())
	}
}

func (p *plugin) register(ctx context.Context) error {
	kubelet := filepath.Join(p.cfg.dir, filepath.Base(pluginapi.KubeletSocket))
	conn, err := grpc.NewClient("unix://"+kubelet, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     p.socket,
		ResourceName: p.resource,
		Options:      &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true},
	})
	return err
}

func readUnhealthy(path string) (map[string]bool, time.Time) {
	out := map[string]bool{}
	st, err := os.Stat(path)
	if err != nil {
		return out, time.Time{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return out, st.ModTime()
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out, st.ModTime()
}

// socketIdentity is what changes when the kubelet restarts: its socket's inode and change time (an inode
// number alone may be reused by the new socket). Zero when there is no socket.
func socketIdentity(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d/%d.%d", sys.Ino, sys.Ctim.Sec, sys.Ctim.Nsec)
	}
	return st.ModTime().String()
}

// defaultDir is the kubelet's device-plugin folder: <DRAGOMAN_KUBELET_ROOT>/device-plugins/ when that is set.
// (The kubelet's device manager listens on /var/lib/kubelet/device-plugins/kubelet.sock whatever its
// --root-dir: a node whose root is elsewhere must see its own folder at that path, e.g. in its mount namespace.)
func defaultDir() string {
	if root := os.Getenv("DRAGOMAN_KUBELET_ROOT"); root != "" {
		return filepath.Join(root, "device-plugins") + "/"
	}
	return pluginapi.DevicePluginPath
}

func parseConfig() (*config, error) {
	cfg := &config{
		node:        os.Getenv("DRAGOMAN_NODE"),
		devicesPath: os.Getenv("DRAGOMAN_NODE_DEVICES"),
		dir:         nodedevices.Env("DRAGOMAN_DEVICE_PLUGIN_DIR", defaultDir()),
		idStrategy:  nodedevices.Env("DRAGOMAN_DEVICE_ID_STRATEGY", "uuid"),
		strategies:  map[string]bool{},
	}
	if cfg.devicesPath == "" {
		return nil, errors.New("DRAGOMAN_NODE_DEVICES is not set: give the path of the node's devices.json")
	}
	cfg.unhealthyFile = nodedevices.Env("DRAGOMAN_UNHEALTHY_FILE", cfg.devicesPath+".unhealthy")
	for _, s := range strings.Split(nodedevices.Env("DRAGOMAN_DEVICE_LIST_STRATEGY", "envvar,cdi-cri"), ",") {
		switch s = strings.TrimSpace(s); s {
		case "envvar", "cdi-cri", "cdi-annotations":
			cfg.strategies[s] = true
		case "":
		default:
			return nil, fmt.Errorf("DRAGOMAN_DEVICE_LIST_STRATEGY: unknown strategy %q (envvar, cdi-cri, cdi-annotations)", s)
		}
	}
	if cfg.idStrategy != "uuid" && cfg.idStrategy != "index" {
		return nil, fmt.Errorf("DRAGOMAN_DEVICE_ID_STRATEGY: %q is neither uuid nor index", cfg.idStrategy)
	}
	return cfg, nil
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("dragoman-device-plugin ")
	cfg, err := parseConfig()
	if err != nil {
		log.Print(err)
		os.Exit(2)
	}
	doc, err := nodedevices.Read(cfg.devicesPath, cfg.node)
	if err != nil {
		log.Print(err)
		os.Exit(2)
	}
	if cfg.node == "" {
		cfg.node = doc.Node
	}
	var plugins []*plugin
	for _, res := range doc.DevicePlugin {
		if len(res.Devices) > 0 {
			plugins = append(plugins, newPlugin(cfg, res))
		}
	}
	sort.Slice(plugins, func(i, j int) bool { return plugins[i].resource < plugins[j].resource })
	log.Printf("node %s: %d resource(s) in %s", cfg.node, len(plugins), cfg.dir)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)

	applyHealth := func() time.Time {
		names, mtime := readUnhealthy(cfg.unhealthyFile)
		for _, p := range plugins {
			p.setUnhealthy(names)
		}
		return mtime
	}
	healthMtime := applyHealth()

	kubeletSock := filepath.Join(cfg.dir, filepath.Base(pluginapi.KubeletSocket))
	// (Re)start every server and register it; on failure retry until stopped.
	start := func() string {
		for {
			ok := true
			for _, p := range plugins {
				p.stop(false)
				if err := p.serve(); err != nil {
					log.Print(err)
					ok = false
					break
				}
				if err := p.register(ctx); err != nil {
					log.Printf("%s: register with the kubelet at %s: %v", p.resource, kubeletSock, err)
					ok = false
					break
				}
				log.Printf("%s: registered as %s (%d devices)", p.resource, p.socket, len(p.devices))
			}
			if ok || ctx.Err() != nil {
				return socketIdentity(kubeletSock)
			}
			select {
			case <-ctx.Done():
				return ""
			case <-time.After(registerRetryWait):
			}
		}
	}
	kubeletID := ""
	if len(plugins) > 0 {
		kubeletID = start()
	}

	tick := time.NewTicker(minDuration(healthPollEvery, kubeletPollEvery))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			for _, p := range plugins {
				p.stop(true)
			}
			log.Printf("node %s: stopped", cfg.node)
			return
		case <-hup:
			healthMtime = applyHealth()
		case <-tick.C:
			if _, mtime := readUnhealthy(cfg.unhealthyFile); !mtime.Equal(healthMtime) {
				healthMtime = applyHealth()
			}
			if len(plugins) == 0 {
				continue
			}
			restart := socketIdentity(kubeletSock) != kubeletID
			for _, p := range plugins {
				if _, err := os.Stat(p.path()); err != nil {
					restart = true
				}
			}
			if restart && socketIdentity(kubeletSock) != "" {
				log.Printf("node %s: the kubelet restarted; registering again", cfg.node)
				kubeletID = start()
			}
		}
	}
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}
