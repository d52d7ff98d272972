// Command dragoman-plugin-probe plays the kubelet's side of the device-plugin and DRA plugin gRPC APIs,
// so dragoman's tests can drive its plugins (dragoman-device-plugin, dragoman-dra-plugin) without a
// kubelet: the fallback issue 31 names where a real kubelet cannot run.
//
// Protocol: one JSON object per line on stdin, one JSON answer per line on stdout, in order. An answer
// is {"ok":true,...} or {"error":"..."}.
//
//	{"op":"kubelet","dir":D}                  serve the device-plugin Registration service on D/kubelet.sock;
//	                                          each plugin that registers is dialled and its ListAndWatch followed
//	{"op":"kubelet-restart"}                  replace D/kubelet.sock with a new one (a restarted kubelet)
//	{"op":"registrations"}                    -> {"registrations":[{resource,endpoint,version,preferredAllocation}]}
//	{"op":"devices","resource":R}             -> {"devices":[{id,health}],"updates":N} (the latest ListAndWatch answer)
//	{"op":"allocate","resource":R,"containers":[[ID,...],...]}
//	                                          -> {"containers":[{envs,cdiDevices,annotations,devices,mounts}]}
//	{"op":"dra-register","registry":D,"timeout":S}
//	                                          the kubelet's plugin watcher: GetInfo on D's *-reg.sock, then
//	                                          NotifyRegistrationStatus(registered) -> {name,endpoint,versions}
//	{"op":"dra-prepare","endpoint":E,"claims":[{uid,namespace,name}]}
//	                                          -> {"claims":{UID:{"devices":[{requests,pool,device,cdiDeviceIDs}],"error":""}}}
//	{"op":"dra-unprepare","endpoint":E,"claims":[...]} -> {"claims":{UID:{"error":""}}}
//	{"op":"dra-health","endpoint":E,"reports":N,"timeout":S}
//	                                          -> {"reports":[[{pool,device,health}],...]} the first N health reports
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	drahealth "k8s.io/kubelet/pkg/apis/dra-health/v1"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

type registration struct {
	Resource            string `json:"resource"`
	Endpoint            string `json:"endpoint"`
	Version             string `json:"version"`
	PreferredAllocation bool   `json:"preferredAllocation"`
}

type watched struct {
	devices []map[string]string
	updates int
	conn    *grpc.ClientConn
	cancel  context.CancelFunc
}

type kubelet struct {
	pluginapi.UnimplementedRegistrationServer

	dir    string
	server *grpc.Server
	mu     sync.Mutex
	regs   []registration
	byRes  map[string]*watched
}

func dial(path string) (*grpc.ClientConn, error) {
	return grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

func (k *kubelet) Register(_ context.Context, r *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	conn, err := dial(filepath.Join(k.dir, r.Endpoint))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := pluginapi.NewDevicePluginClient(conn).ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		cancel()
		conn.Close()
		return nil, fmt.Errorf("ListAndWatch: %w", err)
	}
	w := &watched{conn: conn, cancel: cancel}
	k.mu.Lock()
	if old := k.byRes[r.ResourceName]; old != nil {
		old.cancel()
		old.conn.Close()
	}
	k.byRes[r.ResourceName] = w
	k.regs = append(k.regs, registration{
		Resource: r.ResourceName, Endpoint: r.Endpoint, Version: r.Version,
		PreferredAllocation: r.Options != nil && r.Options.GetPreferredAllocationAvailable,
	})
	k.mu.Unlock()
	go func() {
		for {
			resp, err := stream.Recv()
			if err != nil {
				return
			}
			devs := make([]map[string]string, 0, len(resp.Devices))
			for _, d := range resp.Devices {
				devs = append(devs, map[string]string{"id": d.ID, "health": d.Health})
			}
			k.mu.Lock()
			w.devices, w.updates = devs, w.updates+1
			k.mu.Unlock()
		}
	}()
	return &pluginapi.Empty{}, nil
}

func (k *kubelet) listen() error {
	path := filepath.Join(k.dir, filepath.Base(pluginapi.KubeletSocket))
	_ = os.Remove(path)
	lis, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	k.server = grpc.NewServer()
	pluginapi.RegisterRegistrationServer(k.server, k)
	go func() { _ = k.server.Serve(lis) }()
	return nil
}

type probe struct {
	kubelet *kubelet
}

func (p *probe) handle(req map[string]any) (map[string]any, error) {
	str := func(key string) string { s, _ := req[key].(string); return s }
	num := func(key string, def float64) float64 {
		if f, ok := req[key].(float64); ok {
			return f
		}
		return def
	}
	switch req["op"] {
	case "kubelet":
		if p.kubelet != nil {
			return nil, errors.New("a kubelet is already serving")
		}
		k := &kubelet{dir: str("dir"), byRes: map[string]*watched{}}
		if err := k.listen(); err != nil {
			return nil, err
		}
		p.kubelet = k
		return map[string]any{}, nil
	case "kubelet-restart":
		if p.kubelet == nil {
			return nil, errors.New("no kubelet")
		}
		p.kubelet.server.Stop()
		return map[string]any{}, p.kubelet.listen()
	case "registrations":
		if p.kubelet == nil {
			return nil, errors.New("no kubelet")
		}
		p.kubelet.mu.Lock()
		defer p.kubelet.mu.Unlock()
		return map[string]any{"registrations": append([]registration{}, p.kubelet.regs...)}, nil
	case "devices":
		if p.kubelet == nil {
			return nil, errors.New("no kubelet")
		}
		p.kubelet.mu.Lock()
		defer p.kubelet.mu.Unlock()
		w := p.kubelet.byRes[str("resource")]
		if w == nil {
			return map[string]any{"devices": nil, "updates": 0}, nil
		}
		return map[string]any{"devices": w.devices, "updates": w.updates}, nil
	case "allocate":
		if p.kubelet == nil {
			return nil, errors.New("no kubelet")
		}
		p.kubelet.mu.Lock()
		w := p.kubelet.byRes[str("resource")]
		p.kubelet.mu.Unlock()
		if w == nil {
			return nil, fmt.Errorf("no plugin registered %s", str("resource"))
		}
		var areq pluginapi.AllocateRequest
		containers, _ := req["containers"].([]any)
		for _, c := range containers {
			var ids []string
			for _, id := range c.([]any) {
				ids = append(ids, id.(string))
			}
			areq.ContainerRequests = append(areq.ContainerRequests, &pluginapi.ContainerAllocateRequest{DevicesIds: ids})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := pluginapi.NewDevicePluginClient(w.conn).Allocate(ctx, &areq)
		if err != nil {
			return nil, err
		}
		var out []map[string]any
		for _, c := range resp.ContainerResponses {
			var cdi []string
			for _, d := range c.CdiDevices {
				cdi = append(cdi, d.Name)
			}
			var devs []string
			for _, d := range c.Devices {
				devs = append(devs, d.HostPath)
			}
			var mounts []string
			for _, m := range c.Mounts {
				mounts = append(mounts, m.ContainerPath)
			}
			out = append(out, map[string]any{"envs": c.Envs, "cdiDevices": cdi, "annotations": c.Annotations, "devices": devs, "mounts": mounts})
		}
		return map[string]any{"containers": out}, nil
	case "dra-register":
		deadline := time.Now().Add(time.Duration(num("timeout", 30) * float64(time.Second)))
		for {
			matches, _ := filepath.Glob(filepath.Join(str("registry"), "*-reg.sock"))
			if len(matches) > 0 {
				conn, err := dial(matches[0])
				if err != nil {
					return nil, err
				}
				defer conn.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				client := registerapi.NewRegistrationClient(conn)
				info, err := client.GetInfo(ctx, &registerapi.InfoRequest{})
				if err == nil {
					_, err = client.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true})
				}
				if err == nil {
					return map[string]any{"socket": matches[0], "type": info.Type, "name": info.Name, "endpoint": info.Endpoint, "versions": info.SupportedVersions}, nil
				}
				if time.Now().After(deadline) {
					return nil, err
				}
			} else if time.Now().After(deadline) {
				return nil, fmt.Errorf("no registration socket in %s", str("registry"))
			}
			time.Sleep(200 * time.Millisecond)
		}
	case "dra-prepare", "dra-unprepare":
		conn, err := dial(str("endpoint"))
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		var claims []*drapb.Claim
		list, _ := req["claims"].([]any)
		for _, c := range list {
			m := c.(map[string]any)
			claims = append(claims, &drapb.Claim{Uid: m["uid"].(string), Namespace: m["namespace"].(string), Name: m["name"].(string)})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client := drapb.NewDRAPluginClient(conn)
		out := map[string]any{}
		if req["op"] == "dra-unprepare" {
			resp, err := client.NodeUnprepareResources(ctx, &drapb.NodeUnprepareResourcesRequest{Claims: claims})
			if err != nil {
				return nil, err
			}
			for uid, r := range resp.Claims {
				out[uid] = map[string]any{"error": r.Error}
			}
			return map[string]any{"claims": out}, nil
		}
		resp, err := client.NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{Claims: claims})
		if err != nil {
			return nil, err
		}
		for uid, r := range resp.Claims {
			var devs []map[string]any
			for _, d := range r.Devices {
				devs = append(devs, map[string]any{"requests": d.RequestNames, "pool": d.PoolName, "device": d.DeviceName, "cdiDeviceIDs": d.CdiDeviceIds})
			}
			out[uid] = map[string]any{"devices": devs, "error": r.Error}
		}
		return map[string]any{"claims": out}, nil
	case "dra-health":
		conn, err := dial(str("endpoint"))
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(num("timeout", 30)*float64(time.Second)))
		defer cancel()
		stream, err := drahealth.NewDRAResourceHealthClient(conn).NodeWatchResources(ctx, &drahealth.NodeWatchResourcesRequest{})
		if err != nil {
			return nil, err
		}
		var reports [][]map[string]string
		for len(reports) < int(num("reports", 1)) {
			resp, err := stream.Recv()
			if err != nil {
				return nil, err
			}
			var rep []map[string]string
			for _, d := range resp.Devices {
				rep = append(rep, map[string]string{"pool": d.Device.PoolName, "device": d.Device.DeviceName, "health": d.Health.String()})
			}
			reports = append(reports, rep)
		}
		return map[string]any{"reports": reports}, nil
	}
	return nil, fmt.Errorf("unknown op %v", req["op"])
}

func main() {
	p := &probe{}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req map[string]any
		var answer map[string]any
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			answer = map[string]any{"error": "not JSON: " + err.Error()}
		} else if res, err := p.handle(req); err != nil {
			answer = map[string]any{"error": err.Error()}
		} else {
			answer = res
			answer["ok"] = true
		}
		if err := out.Encode(answer); err != nil {
			os.Exit(1)
		}
	}
}
