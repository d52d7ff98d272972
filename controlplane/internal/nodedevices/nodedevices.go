// Package nodedevices reads the devices.json that dragoman's Python side writes for one node
// (sim/controlplane/nodedevices.py write_node_devices): the GPUs the project's device plugin and DRA
// kubelet plugin serve there. Nothing about GPUs is computed here: the file is the one source, shared
// with the Python node agents.
package nodedevices

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// SchemaVersion is the devices.json version this package reads.
const SchemaVersion = 1

// PluginDevice is one device as the device plugin registers it with the kubelet.
type PluginDevice struct {
	ID         string `json:"id"`    // what the kubelet's device manager tracks (a UUID, or <uuid>::<n> for a replica)
	UUID       string `json:"uuid"`  // the GPU or MIG device it stands for
	Index      string `json:"index"` // its index ("0", or "0:1" for a MIG device)
	DeviceNode string `json:"deviceNode"`
}

// PluginResource is one extended resource the device plugin advertises.
type PluginResource struct {
	Resource string         `json:"resource"`
	Devices  []PluginDevice `json:"devices"`
}

// GPU is one physical GPU of the node.
type GPU struct {
	Minor      int    `json:"minor"`
	UUID       string `json:"uuid"`
	PCIBusID   string `json:"pciBusID"`
	DeviceNode string `json:"deviceNode"`
	DRADevice  string `json:"draDevice"`
}

// Doc is a devices.json document. A slice is kept as raw JSON ({"devices": [...]} or
// {"sharedCounters": [...]}) and decoded into the API types by the DRA plugin.
type Doc struct {
	SchemaVersion  int                          `json:"schemaVersion"`
	Node           string                       `json:"node"`
	Driver         string                       `json:"driver"`
	Pool           string                       `json:"pool"`
	Schema         string                       `json:"schema"`
	SlicesBySchema map[string][]json.RawMessage `json:"slicesBySchema"`
	DevicePlugin   []PluginResource             `json:"devicePlugin"`
	GPUs           []GPU                        `json:"gpus"`
}

// Read loads and checks a devices.json; node, when not empty, must be the node the file was written for.
func Read(path, node string) (*Doc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the node's devices: %w", err)
	}
	var doc Doc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is not a devices.json: %w", path, err)
	}
	if doc.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s has schemaVersion %d; this plugin reads %d", path, doc.SchemaVersion, SchemaVersion)
	}
	if node != "" && doc.Node != node {
		return nil, fmt.Errorf("%s describes node %q, not %q", path, doc.Node, node)
	}
	if doc.Driver == "" || doc.Pool == "" {
		return nil, fmt.Errorf("%s names no driver or pool", path)
	}
	return &doc, nil
}

// Slices returns the slices of the schema asked for (the file's own when empty).
func (d *Doc) Slices(schema string) ([]json.RawMessage, error) {
	if schema == "" {
		schema = d.Schema
	}
	slices, ok := d.SlicesBySchema[schema]
	if !ok {
		known := make([]string, 0, len(d.SlicesBySchema))
		for s := range d.SlicesBySchema {
			known = append(known, s)
		}
		return nil, fmt.Errorf("no slices for attribute schema %q (known: %s)", schema, strings.Join(known, ", "))
	}
	return slices, nil
}

// CDI kinds the two plugins hand out: NVIDIA's device plugin's, and its DRA driver's (vendor "k8s." + driver):
// the claim's own spec entry `<claim uid>-<device name>`, and before v25.12 the node-wide standard device first.
const (
	DevicePluginCDIKind = "nvidia.com/gpu"
	DRACDIKind          = "k8s.gpu.nvidia.com/device"
	DRACDIClaimKind     = "k8s.gpu.nvidia.com/claim"
)

// DRACDIDeviceIDs returns the CDI device names NVIDIA's GPU kubelet plugin returns from NodePrepareResources for
// one device of a claim, for the attribute schema it publishes (its release): from v25.12 only the claim's entry
// (cmd/gpu-kubelet-plugin GetClaimDeviceName), v25.3 to v25.8 the standard device first. A kubelet names the device
// in allocatedResourcesStatus after the first. The Python twin is fleet/nvidia_schema.cdi_device_ids.
func DRACDIDeviceIDs(schema, claimUID, device string) []string {
	claim := DRACDIClaimKind + "=" + claimUID + "-" + device
	if schema == "25.3" || schema == "25.8" {
		return []string{DRACDIKind + "=" + device, claim}
	}
	return []string{claim}
}

// UUIDOfCDIName returns the GPU UUID behind a CDI device name either plugin hands out on this node
// (nvidia.com/gpu=<uuid or index>, k8s.gpu.nvidia.com/claim=<claim uid>-<device name>,
// k8s.gpu.nvidia.com/device=<device name>; a MIG device's own UUID, a dynamic-MIG placement's parent's), or ""
// when the name is not one of them. The Python twin is sim/controlplane/nodedevices.py uuid_of_cdi_name.
func (d *Doc) UUIDOfCDIName(cdiName string) string {
	kind, name, ok := strings.Cut(cdiName, "=")
	if !ok {
		return ""
	}
	if kind == DRACDIClaimKind {
		// <claim uid>-<device name>: a uid is 36 characters.
		if len(name) <= 37 || name[36] != '-' {
			return ""
		}
		kind, name = DRACDIKind, name[37:]
	}
	switch kind {
	case DevicePluginCDIKind:
		for _, r := range d.DevicePlugin {
			for _, dev := range r.Devices {
				if name == dev.UUID || name == dev.Index {
					return dev.UUID
				}
			}
		}
	case DRACDIKind:
		slices, err := d.Slices("")
		if err != nil {
			return ""
		}
		for _, raw := range slices {
			var s struct {
				Devices []struct {
					Name       string `json:"name"`
					Attributes map[string]struct {
						String *string `json:"string"`
					} `json:"attributes"`
				} `json:"devices"`
			}
			if json.Unmarshal(raw, &s) != nil {
				continue
			}
			for _, dev := range s.Devices {
				if dev.Name != name {
					continue
				}
				for _, key := range []string{"uuid", "parentUUID"} {
					if a, ok := dev.Attributes[key]; ok && a.String != nil {
						return *a.String
					}
				}
			}
		}
	}
	return ""
}

// Env returns the environment variable's value, or def when it is unset or empty.
func Env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
