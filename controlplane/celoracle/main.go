// Command celoracle answers DRA CEL questions with Kubernetes' own code, so dragoman's two Python
// engines can be checked (and timed) against the real thing.
//
// It compiles a selector exactly as the API server validates a new one
// (k8s.io/dynamic-resource-allocation/cel GetCompiler + CompileCELExpression in the requested
// environment, then resource/v1 validation's length and estimated-cost checks), and evaluates it on
// devices exactly as the scheduler does (a StoredExpressions compilation without cost estimation,
// CompilationResult.DeviceMatches with the runtime cost limit).
//
// Protocol: one JSON object per line on stdin, one JSON answer per line on stdout, in order.
//
//	{"op":"info"}
//	    -> versions, compatibility version, limits
//	{"op":"functions","env":"new"|"stored","features":{...}}
//	    -> {"functions":[NAME,...]} every function and operator the environment declares
//	{"op":"devices","set":"fleet","driver":"d","devices":[DEVICE,...]}
//	    -> {"op":"devices","set":"fleet","count":N,"invalid":[null|"why",...]}
//	       defines a named device set for later "eval" lines (a 40,000-device fleet is sent once)
//	{"op":"eval","id":ANY,"expression":"...","env":"new"|"stored","evalEnv":"stored"|"same",
//	 "features":{"consumableCapacity":true,"listTypeAttributes":false},"costLimit":N,
//	 "devices":[DEVICE,...] | "set":"fleet", "results":true, "repeat":N}
//	    -> {"id":ANY,"compile":{"ok":bool,"kind":K,"errorType":T,"message":M,"issues":[{"kind":K,"message":M}]},
//	        "cost":{"estimated":N,"limit":N,"exceeded":bool},
//	        "results":[{"value":bool,"actualCost":N}|{"error":"...","actualCost":N}], "summary":{"match":N,"noMatch":N,"error":N},
//	        "timing":{"evals":N,"nsPerEval":F,"passNs":N,"activationReusedNsPerEval":F}}
//
// DEVICE is a ResourceSlice device ({name, attributes {id: {string|int|bool|version|...}},
// capacity {id: {value: quantity}}, allowMultipleAllocations}) plus an optional "driver" (else the
// set's or line's "driver"). Defaults are Kubernetes 1.37's for a new selector: env "new",
// DRAConsumableCapacity on, DRAListTypeAttributes off, cost limit 1,000,000. Compile kinds are
// syntax (the parser refused it), undeclared, type, regex (a constant pattern RE2 refuses),
// program (a constant call the planner folds fails, e.g. bool("x")), non-bool, too-long, cost,
// internal. Length and estimated cost refuse only a "new" selector: the API server never validates
// a stored one (the scheduler stops it at the runtime cost limit instead). "repeat" > 0 times the
// evaluation loop inside this process (after one warm pass), so process start-up and JSON are not
// in the figure. A malformed line gets {"error": "..."} and the process goes on.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

type features struct {
	ConsumableCapacity *bool `json:"consumableCapacity"`
	ListTypeAttributes *bool `json:"listTypeAttributes"`
}

func (f *features) resolve() dracel.Features {
	// Kubernetes 1.37 defaults: DRAConsumableCapacity beta (on), DRAListTypeAttributes alpha (off).
	out := dracel.Features{EnableConsumableCapacity: true, EnableListTypeAttributes: false}
	if f == nil {
		return out
	}
	if f.ConsumableCapacity != nil {
		out.EnableConsumableCapacity = *f.ConsumableCapacity
	}
	if f.ListTypeAttributes != nil {
		out.EnableListTypeAttributes = *f.ListTypeAttributes
	}
	return out
}

type request struct {
	Op         string            `json:"op"`
	ID         any               `json:"id"`
	Expression *string           `json:"expression"`
	Env        string            `json:"env"`
	EvalEnv    string            `json:"evalEnv"`
	Features   *features         `json:"features"`
	CostLimit  *uint64           `json:"costLimit"`
	Driver     string            `json:"driver"`
	Devices    []json.RawMessage `json:"devices"`
	Set        string            `json:"set"`
	Results    *bool             `json:"results"`
	Repeat     int               `json:"repeat"`
}

type rawDevice struct {
	Driver                   *string                                                   `json:"driver"`
	AllowMultipleAllocations *bool                                                     `json:"allowMultipleAllocations"`
	Attributes               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes"`
	Capacity                 map[resourceapi.QualifiedName]json.RawMessage             `json:"capacity"`
}

// device is one converted device; invalid is why it could not be converted (a device the API
// server would never have stored, e.g. a malformed quantity), in which case it is not evaluated.
type device struct {
	dev     dracel.Device
	invalid string
}

func parseDevice(raw json.RawMessage, defaultDriver string) device {
	var rd rawDevice
	if err := json.Unmarshal(raw, &rd); err != nil {
		return device{invalid: "device: " + err.Error()}
	}
	d := dracel.Device{Driver: defaultDriver, AllowMultipleAllocations: rd.AllowMultipleAllocations, Attributes: rd.Attributes}
	if rd.Driver != nil {
		d.Driver = *rd.Driver
	}
	if len(rd.Capacity) > 0 {
		d.Capacity = make(map[resourceapi.QualifiedName]resourceapi.DeviceCapacity, len(rd.Capacity))
		for name, c := range rd.Capacity {
			// Both the API shape {"value": "1Gi"} and a bare "1Gi" are accepted.
			var text string
			var obj struct {
				Value *string `json:"value"`
			}
			if err := json.Unmarshal(c, &text); err != nil {
				if err := json.Unmarshal(c, &obj); err != nil || obj.Value == nil {
					return device{invalid: fmt.Sprintf("capacity %s: not a quantity", name)}
				}
				text = *obj.Value
			}
			q, err := resource.ParseQuantity(text)
			if err != nil {
				return device{invalid: fmt.Sprintf("capacity %s: %v", name, err)}
			}
			d.Capacity[name] = resourceapi.DeviceCapacity{Value: q}
		}
	}
	return device{dev: d}
}

func parseDevices(raws []json.RawMessage, driver string) []device {
	out := make([]device, len(raws))
	for i, r := range raws {
		out[i] = parseDevice(r, driver)
	}
	return out
}

type issue struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

type compileAnswer struct {
	OK        bool    `json:"ok"`
	Kind      string  `json:"kind,omitempty"`
	ErrorType string  `json:"errorType,omitempty"`
	Message   string  `json:"message,omitempty"`
	Issues    []issue `json:"issues,omitempty"`
}

type costAnswer struct {
	Estimated *uint64 `json:"estimated"`
	Limit     uint64  `json:"limit"`
	Exceeded  bool    `json:"exceeded"`
}

type result struct {
	Value *bool  `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
	// ActualCost is the runtime cost cel-go's tracker counted for this evaluation (EvalDetails.ActualCost), when
	// the evaluation got far enough to have one.
	ActualCost *uint64 `json:"actualCost,omitempty"`
}

type summary struct {
	Match   int `json:"match"`
	NoMatch int `json:"noMatch"`
	Error   int `json:"error"`
	Invalid int `json:"invalid"`
}

type timing struct {
	Evals                     int     `json:"evals"`
	NsPerEval                 float64 `json:"nsPerEval"`
	PassNs                    int64   `json:"passNs"`
	ActivationReusedNsPerEval float64 `json:"activationReusedNsPerEval"`
}

type answer struct {
	ID      any            `json:"id"`
	Compile compileAnswer  `json:"compile"`
	Cost    *costAnswer    `json:"cost,omitempty"`
	Results []result       `json:"results,omitempty"`
	Summary *summary       `json:"summary,omitempty"`
	Timing  *timing        `json:"timing,omitempty"`
	EvalEnv string         `json:"evalEnv,omitempty"`
	Extra   map[string]any `json:"extra,omitempty"`
}

type oracle struct {
	compat   *version.Version
	parseEnv map[environment.Type]*cel.Env
	sets     map[string][]device
	// Compilations are cached as the scheduler's cel.Cache does; the key has everything that matters.
	cache map[string]dracel.CompilationResult
}

func newOracle() *oracle {
	compat := environment.DefaultCompatibilityVersion()
	// The parser alone (base library macros plus DRA's cel.bind), to tell syntax errors from
	// checker errors: CompileCELExpression folds both into one "compilation failed" message.
	parseSet, err := environment.MustBaseEnvSet(compat).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 31),
		EnvOptions:        []cel.EnvOption{ext.Bindings(ext.BindingsVersion(0))},
	})
	if err != nil {
		panic(err)
	}
	o := &oracle{compat: compat, parseEnv: map[environment.Type]*cel.Env{}, sets: map[string][]device{}, cache: map[string]dracel.CompilationResult{}}
	for _, t := range []environment.Type{environment.NewExpressions, environment.StoredExpressions} {
		env, err := parseSet.Env(t)
		if err != nil {
			panic(err)
		}
		o.parseEnv[t] = env
	}
	return o
}

func envType(name string) (environment.Type, error) {
	switch name {
	case "", "new":
		return environment.NewExpressions, nil
	case "stored":
		return environment.StoredExpressions, nil
	}
	return "", fmt.Errorf("env must be \"new\" or \"stored\", not %q", name)
}

func checkKind(message string) string {
	switch {
	case strings.Contains(message, "undeclared reference"), strings.Contains(message, "undefined field"):
		return "undeclared"
	case strings.Contains(message, "invalid matches argument"):
		return "regex"
	}
	return "type"
}

// classify names the kind of a compile failure, one per cel-go issue.
func (o *oracle) classify(expression string, et environment.Type, res dracel.CompilationResult) compileAnswer {
	ans := compileAnswer{Kind: "internal", ErrorType: string(res.Error.Type), Message: res.Error.Detail}
	if strings.HasPrefix(res.Error.Detail, "must evaluate to ") {
		ans.Kind = "non-bool"
		return ans
	}
	if strings.HasPrefix(res.Error.Detail, "program instantiation failed: ") {
		// cel-go's planner folds constant calls (OptOptimize) and compiles constant patterns here, so a
		// literal that cannot convert or a pattern RE2 refuses fails the selector at create time.
		ans.Kind = "program"
		if strings.Contains(res.Error.Detail, "error parsing regexp") {
			ans.Kind = "regex"
		}
		return ans
	}
	if !strings.HasPrefix(res.Error.Detail, "compilation failed: ") {
		return ans
	}
	if _, iss := o.parseEnv[et].Parse(expression); iss != nil && iss.Err() != nil {
		ans.Kind = "syntax"
		for _, e := range iss.Errors() {
			ans.Issues = append(ans.Issues, issue{"syntax", e.Message})
		}
		return ans
	}
	// The checker failed: its issues are in the detail, one "ERROR: <input>:L:C: msg" line each.
	for _, line := range strings.Split(strings.TrimPrefix(res.Error.Detail, "compilation failed: "), "\n") {
		if !strings.HasPrefix(line, "ERROR: ") {
			continue
		}
		msg := line
		if parts := strings.SplitN(line, ": ", 3); len(parts) == 3 {
			msg = parts[2]
		}
		ans.Issues = append(ans.Issues, issue{checkKind(msg), msg})
	}
	ans.Kind = "type"
	if len(ans.Issues) > 0 {
		ans.Kind = ans.Issues[0].Kind
	}
	return ans
}

func (o *oracle) compile(expression string, et environment.Type, f dracel.Features, costLimit *uint64, estimate bool) dracel.CompilationResult {
	key := fmt.Sprintf("%s|%v|%v|%v|%v|%s", et, f.EnableConsumableCapacity, f.EnableListTypeAttributes, costLimit == nil, estimate, expression)
	if costLimit != nil {
		key = fmt.Sprintf("%d|%s", *costLimit, key)
	}
	if r, ok := o.cache[key]; ok {
		return r
	}
	r := dracel.GetCompiler(f).CompileCELExpression(expression, dracel.Options{EnvType: &et, CostLimit: costLimit, DisableCostEstimation: !estimate})
	if len(o.cache) > 20000 {
		o.cache = map[string]dracel.CompilationResult{}
	}
	o.cache[key] = r
	return r
}

func (o *oracle) eval(req *request) (answer, error) {
	ans := answer{ID: req.ID}
	if req.Expression == nil {
		return ans, fmt.Errorf("eval needs \"expression\"")
	}
	expression := *req.Expression
	et, err := envType(req.Env)
	if err != nil {
		return ans, err
	}
	f := req.Features.resolve()
	var devices []device
	if req.Set != "" {
		var ok bool
		if devices, ok = o.sets[req.Set]; !ok {
			return ans, fmt.Errorf("no device set %q (define it with an \"op\":\"devices\" line first)", req.Set)
		}
	} else {
		devices = parseDevices(req.Devices, req.Driver)
	}

	limit := uint64(resourceapi.CELSelectorExpressionMaxCost)
	if req.CostLimit != nil {
		limit = *req.CostLimit
	}
	// resource/v1 validation refuses an over-long new selector before compiling it (in bytes, Go len).
	if et == environment.NewExpressions && len(expression) > resourceapi.CELSelectorExpressionMaxLength {
		ans.Compile = compileAnswer{Kind: "too-long", ErrorType: "FieldValueTooLong", Message: fmt.Sprintf("may not be more than %d bytes", resourceapi.CELSelectorExpressionMaxLength)}
		return ans, nil
	}
	res := o.compile(expression, et, f, req.CostLimit, true)
	if res.Error != nil && res.Program == nil {
		ans.Compile = o.classify(expression, et, res)
		return ans, nil
	}
	ans.Cost = &costAnswer{Limit: limit}
	if res.MaxCost != math.MaxUint64 || res.Error == nil {
		mc := res.MaxCost
		ans.Cost.Estimated = &mc
	}
	if res.Error != nil { // cost estimation failed after compiling
		ans.Compile = compileAnswer{Kind: "internal", ErrorType: string(res.Error.Type), Message: res.Error.Detail}
		return ans, nil
	}
	ans.Cost.Exceeded = res.MaxCost > limit
	if ans.Cost.Exceeded && et == environment.NewExpressions {
		// Validation: field.Forbidden(fldPath, "too complex, exceeds cost limit").
		ans.Compile = compileAnswer{Kind: "cost", ErrorType: "FieldValueForbidden", Message: "too complex, exceeds cost limit"}
		return ans, nil
	}
	ans.Compile = compileAnswer{OK: true}

	// The scheduler compiles through cel.Cache: StoredExpressions, no cost estimation.
	prog := res
	ans.EvalEnv = "same"
	if req.EvalEnv == "" || req.EvalEnv == "stored" {
		ans.EvalEnv = "stored"
		prog = o.compile(expression, environment.StoredExpressions, f, req.CostLimit, false)
		if prog.Error != nil {
			return ans, fmt.Errorf("the stored-expression compilation failed where the %s one did not: %s", et, prog.Error.Detail)
		}
	} else if req.EvalEnv != "same" {
		return ans, fmt.Errorf("evalEnv must be \"stored\" or \"same\", not %q", req.EvalEnv)
	}

	ctx := context.Background()
	want := req.Results == nil || *req.Results
	sum := summary{}
	if want {
		ans.Results = make([]result, len(devices))
	}
	start := time.Now()
	for i := range devices {
		d := &devices[i]
		var r result
		if d.invalid != "" {
			sum.Invalid++
			r.Error = "invalid device: " + d.invalid
		} else {
			matched, details, err := prog.DeviceMatches(ctx, d.dev)
			if details != nil {
				r.ActualCost = details.ActualCost()
			}
			switch {
			case err != nil:
				sum.Error++
				r.Error = err.Error()
			case matched:
				sum.Match++
				r.Value = &matched
			default:
				sum.NoMatch++
				r.Value = &matched
			}
		}
		if want {
			ans.Results[i] = r
		}
	}
	pass := time.Since(start)
	ans.Summary = &sum
	if req.Repeat > 0 {
		t := timeLoop(ctx, prog, devices, req.Repeat)
		t.PassNs = pass.Nanoseconds()
		ans.Timing = &t
	}
	return ans, nil
}

// timeLoop measures DeviceMatches as the scheduler calls it (the activation maps are built per
// call) and, separately, the compiled program alone on activations built once per device.
func timeLoop(ctx context.Context, prog dracel.CompilationResult, devices []device, repeat int) timing {
	valid := make([]dracel.Device, 0, len(devices))
	for _, d := range devices {
		if d.invalid == "" {
			valid = append(valid, d.dev)
		}
	}
	t := timing{Evals: repeat * len(valid)}
	if len(valid) == 0 {
		return t
	}
	start := time.Now()
	for n := 0; n < repeat; n++ {
		for i := range valid {
			_, _, _ = prog.DeviceMatches(ctx, valid[i])
		}
	}
	t.NsPerEval = float64(time.Since(start).Nanoseconds()) / float64(t.Evals)

	acts := make([]any, len(valid))
	for i := range valid {
		acts[i] = activation(prog, valid[i])
	}
	start = time.Now()
	for n := 0; n < repeat; n++ {
		for i := range acts {
			_, _, _ = prog.Program.ContextEval(ctx, acts[i])
		}
	}
	t.ActivationReusedNsPerEval = float64(time.Since(start).Nanoseconds()) / float64(t.Evals)
	return t
}

func info(o *oracle) map[string]any {
	mods := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			switch m.Path {
			case "github.com/google/cel-go", "k8s.io/dynamic-resource-allocation", "k8s.io/apiserver", "k8s.io/api", "k8s.io/kubernetes":
				v := m.Version
				if m.Replace != nil {
					v = m.Replace.Version
				}
				mods[m.Path] = v
			}
		}
		mods["go"] = bi.GoVersion
	}
	return map[string]any{
		"op":                   "info",
		"modules":              mods,
		"compatibilityVersion": o.compat.String(),
		"costLimit":            resourceapi.CELSelectorExpressionMaxCost,
		"maxExpressionLength":  resourceapi.CELSelectorExpressionMaxLength,
		"defaults":             map[string]any{"env": "new", "evalEnv": "stored", "consumableCapacity": true, "listTypeAttributes": false},
	}
}

func main() {
	o := newOracle()
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			_ = enc.Encode(o.handle(line))
			// Answer each line as it comes, so a caller may talk to the process interactively.
			if in.Buffered() == 0 {
				out.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

func (o *oracle) handle(line []byte) any {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return map[string]any{"error": "malformed request line: " + err.Error()}
	}
	switch req.Op {
	case "info":
		return info(o)
	case "functions":
		// Every function and operator the environment declares, so a caller can prove it covers them all.
		et, err := envType(req.Env)
		if err != nil {
			return map[string]any{"id": req.ID, "error": err.Error()}
		}
		res := o.compile("true", et, req.Features.resolve(), nil, false)
		if res.Environment == nil {
			return map[string]any{"id": req.ID, "error": "the environment did not build"}
		}
		names := []string{}
		for name := range res.Environment.Functions() {
			names = append(names, name)
		}
		sort.Strings(names)
		return map[string]any{"op": "functions", "id": req.ID, "functions": names}
	case "devices":
		if req.Set == "" {
			return map[string]any{"id": req.ID, "error": "devices needs \"set\""}
		}
		devs := parseDevices(req.Devices, req.Driver)
		o.sets[req.Set] = devs
		invalid := make([]*string, len(devs))
		for i := range devs {
			if devs[i].invalid != "" {
				invalid[i] = &devs[i].invalid
			}
		}
		return map[string]any{"op": "devices", "id": req.ID, "set": req.Set, "count": len(devs), "invalid": invalid}
	case "eval", "":
		ans, err := o.eval(&req)
		if err != nil {
			return map[string]any{"id": req.ID, "error": err.Error()}
		}
		return ans
	}
	return map[string]any{"id": req.ID, "error": fmt.Sprintf("unknown op %q (info, functions, devices, eval)", req.Op)}
}
