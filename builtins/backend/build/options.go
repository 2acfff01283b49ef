package build

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/child"
)

// options are what build(...) was given besides the source: they shape the
// binary, so they are part of where it is cached.
type options struct {
	cgo     string // "0", "1", or "" for Go's default
	tags    []string
	ldflags string
	env     []string // NAME=value, sorted
}

// buildOptions reads cgo, tags, ldflags and env.
func buildOptions(cgo, tags starlark.Value, ldflags string, env *starlark.Dict) (options, error) {
	var o options
	switch c := cgo.(type) {
	case starlark.NoneType:
	case starlark.Bool:
		o.cgo = map[bool]string{true: "1", false: "0"}[bool(c)]
	default:
		return o, fmt.Errorf("cgo must be True, False or None, got %s", cgo.Type())
	}
	switch t := tags.(type) {
	case starlark.NoneType:
	case starlark.String:
		o.tags = splitTags(string(t))
	case *starlark.List, starlark.Tuple:
		for x := range starlark.Elements(t.(starlark.Iterable)) {
			s, ok := starlark.AsString(x)
			if !ok {
				return o, fmt.Errorf("tags: want strings, got %s", x.Type())
			}
			o.tags = append(o.tags, splitTags(s)...)
		}
	default:
		return o, fmt.Errorf("tags must be a list of strings or a comma-separated string, got %s", tags.Type())
	}
	o.ldflags = strings.TrimSpace(ldflags)
	if env != nil {
		for _, kv := range env.Items() {
			k, ok1 := starlark.AsString(kv[0])
			v, ok2 := starlark.AsString(kv[1])
			if !ok1 || !ok2 || k == "" || strings.Contains(k, "=") {
				return o, fmt.Errorf("env: want variable names to strings, got %s: %s", kv[0], kv[1].Type())
			}
			if k == "CGO_ENABLED" {
				return o, fmt.Errorf("env: CGO_ENABLED is set by cgo = True or False")
			}
			o.env = append(o.env, k+"="+v)
		}
		sort.Strings(o.env)
	}
	return o, nil
}

func splitTags(s string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, t)
	}
	return out
}

// environ is go build's environment: benchbook's, with env and CGO_ENABLED
// as given.
func (o options) environ() []string {
	env := os.Environ()
	set := func(kv string) {
		name, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(x string) bool { return strings.HasPrefix(x, name+"=") })
		env = append(env, kv)
	}
	for _, kv := range o.env {
		set(kv)
	}
	if o.cgo != "" {
		set("CGO_ENABLED=" + o.cgo)
	}
	return env
}

// flags are go build's flags for the tags and ldflags.
func (o options) flags() []string {
	var f []string
	if len(o.tags) > 0 {
		f = append(f, "-tags", strings.Join(o.tags, ","))
	}
	if o.ldflags != "" {
		f = append(f, "-ldflags", o.ldflags)
	}
	return f
}

// toolchainVars are the go env variables that shape a binary: a cached
// binary built under others is not the one asked for.
var toolchainVars = []string{"GOVERSION", "CGO_ENABLED", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOEXPERIMENT", "GOFLAGS", "CC", "CGO_CFLAGS", "CGO_LDFLAGS"}

// goSettings asks the go command in dir, with env, for the toolchain's
// settings and adds the given options and the variables env sets:
// "go1.26.0 CGO_ENABLED=0 GOARCH=amd64 GOOS=linux -tags fast -ldflags '-X main.v=2'".
func goSettings(ctx context.Context, dir string, env []string, o options) (string, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"env", "-json"}, toolchainVars...)...)
	var out, stderr bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &stderr
	if err := child.Run(cmd); err != nil {
		return "", fmt.Errorf("go env: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	vars := map[string]string{}
	if err := json.Unmarshal(out.Bytes(), &vars); err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	parts := []string{vars["GOVERSION"]}
	for _, k := range toolchainVars[1:] {
		if v := vars[k]; v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	for _, kv := range o.env {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(toolchainVars, k) {
			parts = append(parts, kv)
		}
	}
	if len(o.tags) > 0 {
		parts = append(parts, "-tags "+strings.Join(o.tags, ","))
	}
	if o.ldflags != "" {
		parts = append(parts, fmt.Sprintf("-ldflags %q", o.ldflags))
	}
	return strings.Join(parts, " "), nil
}
