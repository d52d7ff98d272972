package main

import (
	"strings"

	"github.com/blang/semver/v4"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	resourceapi "k8s.io/api/resource/v1"
	apiservercel "k8s.io/apiserver/pkg/cel"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// activation builds once the `device` variable that CompilationResult.DeviceMatches builds on every
// call (dynamic-resource-allocation/cel compile.go, whose helpers are unexported), so the timing
// can also show the compiled program's own cost. It is used for timing only: every answer the
// oracle gives comes from DeviceMatches itself.
func activation(prog dracel.CompilationResult, d dracel.Device) map[string]any {
	attributes := map[string]any{}
	for name, attr := range d.Attributes {
		value, ok := attributeValue(attr)
		if !ok {
			continue
		}
		domain, id := splitName(name, d.Driver)
		if attributes[domain] == nil {
			attributes[domain] = map[string]any{}
		}
		attributes[domain].(map[string]any)[id] = value
	}
	capacity := map[string]any{}
	for name, c := range d.Capacity {
		c := c
		domain, id := splitName(name, d.Driver)
		if capacity[domain] == nil {
			capacity[domain] = map[string]apiservercel.Quantity{}
		}
		capacity[domain].(map[string]apiservercel.Quantity)[id] = apiservercel.Quantity{Quantity: &c.Value}
	}
	adapter := prog.Environment.CELTypeAdapter()
	empty := adapter.NativeToValue(map[string]any{})
	multi := d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations
	return map[string]any{
		"device": map[string]any{
			"driver":                   d.Driver,
			"allowMultipleAllocations": multi,
			"attributes":               defaultMapper{types.NewStringInterfaceMap(adapter, attributes), empty},
			"capacity":                 defaultMapper{types.NewStringInterfaceMap(adapter, capacity), empty},
		},
	}
}

func attributeValue(attr resourceapi.DeviceAttribute) (any, bool) {
	parse := func(s string) (any, bool) {
		v, err := semver.Parse(s)
		if err != nil {
			return nil, false
		}
		return apiservercel.Semver{Version: v}, true
	}
	switch {
	case attr.IntValues != nil:
		return attr.IntValues, true
	case attr.BoolValues != nil:
		return attr.BoolValues, true
	case attr.StringValues != nil:
		return attr.StringValues, true
	case attr.VersionValues != nil:
		out := make([]apiservercel.Semver, 0, len(attr.VersionValues))
		for _, s := range attr.VersionValues {
			v, ok := parse(s)
			if !ok {
				return nil, false
			}
			out = append(out, v.(apiservercel.Semver))
		}
		return out, true
	case attr.IntValue != nil:
		return *attr.IntValue, true
	case attr.BoolValue != nil:
		return *attr.BoolValue, true
	case attr.StringValue != nil:
		return *attr.StringValue, true
	case attr.VersionValue != nil:
		return parse(*attr.VersionValue)
	}
	return nil, false
}

func splitName(name resourceapi.QualifiedName, driver string) (string, string) {
	if i := strings.Index(string(name), "/"); i >= 0 {
		return string(name[:i]), string(name[i+1:])
	}
	return driver, string(name)
}

// defaultMapper answers an unknown domain with an empty map, as upstream's mapper does.
type defaultMapper struct {
	traits.Mapper
	empty ref.Val
}

func (m defaultMapper) Find(key ref.Val) (ref.Val, bool) {
	if v, ok := m.Mapper.Find(key); ok {
		return v, true
	}
	return m.empty, true
}
