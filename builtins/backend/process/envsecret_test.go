package process

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/redact"
)

// TestEnvSecretsAreLearned: a secret handed to a target in its environment
// (made at run time, so no cell's source holds it) is hidden wherever the
// target prints it, as for containers (container/envsecret_test.go).
func TestEnvSecretsAreLearned(t *testing.T) {
	for _, c := range []struct {
		kind, name, value string
		spec              func(env *starlark.Dict) error
	}{
		{"process", "API_SECRET", "s3cr3t-for-process-" + t.Name(), func(env *starlark.Dict) error {
			_, err := makeSpec(&starlark.Thread{}, starlark.String("true"), env, "", "", 0)
			return err
		}},
	} {
		env := starlark.NewDict(1)
		env.SetKey(starlark.String(c.name), starlark.String(c.value)) //nolint:errcheck
		if err := c.spec(env); err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if got := redact.String("log: connecting with " + c.value + " now"); strings.Contains(got, c.value) {
			t.Errorf("%s: env %s reached the record: %q", c.kind, c.name, got)
		}
	}
}
