package kube_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/pgwire"
)

const (
	leakDSN      = "postgres://bench:S3cretPw@db:5432/x"
	leakPassword = "S3cretPw"
)

// A workload.sql fleet's password is readable only in the Secret's data:
// every object of every kind the fake API server holds in the namespace,
// and every object ever sent to it (deleted ones too), is serialized as
// YAML and JSON and searched for the password in plain text and in
// base64, with only the Secret's data left out.
func TestSQLPasswordOnlyInSecret(t *testing.T) {
	c := fake.NewClientset()
	// Every index fails its image pull: pods exist, with their spec, but no
	// agent tries to reach db:5432.
	k := newKubelet(t, c, map[int]bool{0: true, 1: true})
	l := launcher(c, k)
	ctx := context.Background()
	if _, err := l.Launch(ctx, sqlSpecs(t, 2)); err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	waitPods(t, c, 2)
	objs := namespaceObjects(t, c, "bench")
	for _, a := range c.Actions() { // creates and updates: what was sent, deleted since or not
		if o, ok := a.(interface{ GetObject() runtime.Object }); ok && o.GetObject() != nil {
			objs = append(objs, o.GetObject())
		}
	}
	secrets := 0
	for _, o := range objs {
		if s, ok := o.(*corev1.Secret); ok {
			secrets++
			if !secretHolds(s, leakDSN) {
				t.Errorf("Secret %s: the DSN is not in its data: the agents could not read it", s.Name)
			}
			s = s.DeepCopy()
			s.Data, s.StringData = nil, nil
			o = s
		}
		checkNoPassword(t, o)
	}
	if secrets == 0 {
		t.Error("no Secret holds the agents' specs")
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkRBAC(t, c)
	assertCleanedUp(t, c)
}

// sqlSpecs are n agents' specs for a workload.sql load, in the shape
// fleet.Specs gives them (fleet.Load: the loadgen.Spec and the plain part
// of the SQL spec, DSN included).
func sqlSpecs(t *testing.T, n int) []fleet.Spec {
	t.Helper()
	load := fleet.Load{
		Spec: loadgen.Spec{Clients: 4, Duration: time.Second, Label: "SELECT 1"},
		SQL:  &fleet.SQLLoad{DSN: leakDSN, Statements: []pgwire.Statement{{SQL: "SELECT 1"}}},
	}
	b, err := json.Marshal(load)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), leakDSN) {
		t.Fatalf("the spec does not carry the DSN as it is: %s", b)
	}
	specs := make([]fleet.Spec, n)
	for i := range specs {
		specs[i] = fleet.Spec{Version: fleet.Version, Kind: "sql", Load: b, Agent: i, Agents: n, SeqBase: int64(i) * fleet.SeqRange}
	}
	return specs
}

func waitPods(t *testing.T, c *fake.Clientset, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pods, err := c.CoreV1().Pods("bench").List(context.Background(), metav1.ListOptions{})
		if err == nil && len(pods.Items) == n {
			return
		}
	}
	t.Fatalf("the kubelet made no %d pods in 10 s", n)
}

// namespaceObjects lists ns in every resource the clientset's scheme knows,
// not only those benchbook creates, and fails if an API call touched a
// resource the listing missed.
func namespaceObjects(t *testing.T, c *fake.Clientset, ns string) []runtime.Object {
	t.Helper()
	var out []runtime.Object
	listed := map[schema.GroupVersionResource]bool{}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") ||
			!scheme.Scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind+"List")) {
			continue
		}
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		list, err := c.Tracker().List(gvr, gvk, ns)
		if err != nil {
			continue // a type the guessed resource does not list (not an API object)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		listed[gvr] = true
		out = append(out, items...)
	}
	for _, a := range c.Actions() {
		if r := a.GetResource(); r.Resource != "" && !listed[r] {
			t.Fatalf("%s %s: a resource the listing does not cover", a.GetVerb(), r)
		}
	}
	return out
}

// checkNoPassword fails if o, as YAML or JSON, holds the password or the
// DSN in plain text or base64, and names the places leaked secrets are
// most often found in: labels, annotations, args, env.
func checkNoPassword(t *testing.T, o runtime.Object) {
	t.Helper()
	name := fmt.Sprintf("%T", o)
	if m, err := meta.Accessor(o); err == nil {
		name += " " + m.GetName()
		for _, kv := range []map[string]string{m.GetLabels(), m.GetAnnotations()} {
			for k, v := range kv {
				if leaks(k + "=" + v) {
					t.Errorf("%s: label or annotation %s=%s holds the password", name, k, v)
				}
			}
		}
	}
	for _, c := range containers(o) {
		if leaks(strings.Join(c.Args, " ") + strings.Join(c.Command, " ")) {
			t.Errorf("%s: container %s's command line holds the password: %q", name, c.Name, c.Args)
		}
		for _, e := range c.Env {
			if leaks(e.Name + "=" + e.Value) {
				t.Errorf("%s: container %s's env holds the password: %s", name, c.Name, e.Name)
			}
		}
	}
	y, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if leaks(string(y)) || leaks(string(j)) {
		t.Errorf("%s holds the password:\n%s", name, y)
	}
}

func containers(o runtime.Object) []corev1.Container {
	switch o := o.(type) {
	case *batchv1.Job:
		return o.Spec.Template.Spec.Containers
	case *corev1.Pod:
		return o.Spec.Containers
	}
	return nil
}

// leaks says whether s holds the password as it is or in base64, at any
// of the three alignments it could start at inside a longer base64 text
// (as cmd/benchbook/secrets_test.go searches).
func leaks(s string) bool {
	if strings.Contains(s, leakPassword) || strings.Contains(s, leakDSN) {
		return true
	}
	for shift := range 3 {
		sub := leakPassword[shift:]
		sub = sub[:len(sub)/3*3]
		if strings.Contains(s, base64.StdEncoding.EncodeToString([]byte(sub))) ||
			strings.Contains(s, base64.RawURLEncoding.EncodeToString([]byte(sub))) {
			return true
		}
	}
	return false
}

func secretHolds(s *corev1.Secret, want string) bool {
	for _, v := range s.Data {
		if strings.Contains(string(v), want) {
			return true
		}
	}
	return false
}
