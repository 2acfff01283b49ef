package kube_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
	"github.com/benchbook/benchbook/builtins/workload/fleet/kube"
	"github.com/benchbook/benchbook/runtime/testsupport/golden"
)

func TestMain(m *testing.M) {
	fleettest.AgentMain()
	os.Exit(m.Run())
}

// kubelet plays the cluster's side for the fake clientset, which stores
// objects but runs nothing: for each Job it makes the Indexed Job's pods,
// mounts the Secret as files (with the volume's mode), runs the
// container's arguments with this test binary as the image's benchbook,
// serves its stdout as the pod's log, and kills it when its pod or Job is
// deleted. Indices in pull fail as an image that cannot be pulled.
type kubelet struct {
	t    *testing.T
	c    *fake.Clientset
	pull map[int]bool
	// unschedulable indices get a pod the scheduler cannot place.
	unschedulable map[int]bool
	mu            sync.Mutex
	logs          map[string]io.ReadCloser
	ready         map[string]chan struct{}
	procs         []agentProc
}

func newKubelet(t *testing.T, c *fake.Clientset, pull map[int]bool) *kubelet {
	k := &kubelet{t: t, c: c, pull: pull, logs: map[string]io.ReadCloser{}, ready: map[string]chan struct{}{}}
	// The kubelet goes through the tracker: c.Actions() stay benchbook's,
	// for wantVerbs and checkRBAC.
	w, err := c.Tracker().Watch(batchv1.SchemeGroupVersion.WithResource("jobs"), "bench")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := c.Tracker().Watch(podsResource, "bench")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			if job, ok := ev.Object.(*batchv1.Job); ok && ev.Type == watch.Added {
				k.runJob(job)
			}
			if job, ok := ev.Object.(*batchv1.Job); ok && ev.Type == watch.Deleted {
				k.kill(job.Name + "-") // background propagation deletes the pods
			}
		}
	}()
	go func() {
		for ev := range pw.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Deleted {
				k.kill(pod.Name)
			}
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		pw.Stop()
		k.mu.Lock()
		procs := k.procs
		k.mu.Unlock()
		for _, p := range procs {
			_ = p.cmd.Process.Kill()
			<-p.exited // the pod's own goroutine waits for it: Wait only once
		}
	})
	return k
}

var podsResource = corev1.SchemeGroupVersion.WithResource("pods")

// agentProc is a pod's agent process; exited closes once its Wait returned.
type agentProc struct {
	pod    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// kill ends the agents of the pods whose names start with prefix.
func (k *kubelet) kill(prefix string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.procs {
		if strings.HasPrefix(p.pod, prefix) {
			_ = p.cmd.Process.Kill()
		}
	}
}

func (k *kubelet) runJob(job *batchv1.Job) {
	vol := job.Spec.Template.Spec.Volumes[0].Secret
	if vol == nil {
		k.t.Errorf("the Job mounts no Secret: %+v", job.Spec.Template.Spec.Volumes)
		return
	}
	obj, err := k.c.Tracker().Get(corev1.SchemeGroupVersion.WithResource("secrets"), job.Namespace, vol.SecretName)
	if err != nil {
		k.t.Errorf("the Job's Secret: %v", err)
		return
	}
	sec := obj.(*corev1.Secret)
	dir := k.t.TempDir()
	for name, data := range sec.Data {
		if err := os.WriteFile(filepath.Join(dir, name), data, os.FileMode(*vol.DefaultMode)); err != nil {
			k.t.Error(err)
		}
	}
	for i := range int(*job.Spec.Completions) {
		k.runPod(job, i, dir)
	}
}

func (k *kubelet) runPod(job *batchv1.Job, i int, dir string) {
	name := job.Name + "-" + strconv.Itoa(i) + "-x"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: job.Namespace, Labels: job.Spec.Template.Labels,
		Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": strconv.Itoa(i)}},
		Spec: *job.Spec.Template.Spec.DeepCopy()} // as the Job controller makes it
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent"}}
	if k.unschedulable[i] {
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu."}}
		pod.Status.ContainerStatuses = nil
		_ = k.c.Tracker().Create(podsResource, pod, pod.Namespace)
		return
	}
	if k.pull[i] {
		pod.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}
		_ = k.c.Tracker().Create(podsResource, pod, pod.Namespace)
		return
	}
	var args []string
	for _, a := range job.Spec.Template.Spec.Containers[0].Args {
		a = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", strconv.Itoa(i))
		args = append(args, strings.ReplaceAll(a, "/etc/benchbook", dir))
	}
	cmd := exec.Command(os.Args[0], args...)
	// An os.Pipe, not StdoutPipe: Wait (when the pod ends) must not close
	// the log while the coordinator still reads it.
	out, w, err := os.Pipe()
	if err != nil {
		k.t.Error(err)
		return
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		k.t.Error(err)
		return
	}
	exited := make(chan struct{})
	k.mu.Lock()
	k.procs = append(k.procs, agentProc{pod: name, cmd: cmd, exited: exited})
	k.logs[name] = out
	k.mu.Unlock()
	pod.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{}
	_ = k.c.Tracker().Create(podsResource, pod, pod.Namespace)
	go func() {
		err := cmd.Wait()
		close(exited)
		code := int32(0)
		if ee, ok := err.(*exec.ExitError); ok {
			code = int32(ee.ExitCode())
		}
		p := pod.DeepCopy()
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}
		_ = k.c.Tracker().Update(podsResource, p, p.Namespace)
	}()
}

func (k *kubelet) podLogs(_ context.Context, _, pod string) (io.ReadCloser, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.logs[pod], nil
}

func launcher(c *fake.Clientset, k *kubelet) *kube.Launcher {
	return &kube.Launcher{Client: c, Name: "benchbook-fleet-test", Logs: k.podLogs, Opts: kube.Options{
		Namespace: "bench", Image: "registry.example/benchbook-agent:v1", CPU: "1", Memory: "256Mi",
		NodeSelector: map[string]string{"pool": "loadgen"}, StartAfter: 2 * time.Second, Deadline: 10 * time.Minute}}
}

func runOpts(l fleettest.Load) fleet.Options {
	return fleet.Options{Duration: time.Duration(l.Ms) * time.Millisecond, Window: time.Second, Timeout: time.Second, Hang: 3 * time.Second}
}

// create → watch → collect → delete, with the manifests as golden files.
func TestIndexedJobFleet(t *testing.T) {
	c := fake.NewClientset()
	k := newKubelet(t, c, nil)
	l := fleettest.Load{Values: 5000, Seed: 21, Ms: 400, Windows: 1, DieAgent: -1}
	m, err := fleet.Run(context.Background(), launcher(c, k), fleettest.Specs(t, l, 3), runOpts(l))
	if err != nil {
		t.Fatal(err)
	}
	all, ok := fleettest.Oracle(l, []int{0, 1, 2})
	if m.Count != ok || m.Incomplete || len(m.Rows) != 3 {
		t.Fatalf("count %d want %d; rows %+v", m.Count, ok, m.Rows)
	}
	fleettest.SameDistribution(t, m.Hist, all)
	for _, r := range m.Rows {
		if r.LateStart > time.Second || r.ClockMeasured {
			t.Fatalf("row %+v: late, or a clock offset claimed without a probe", r)
		}
	}
	checkManifests(t, c)
	checkRBAC(t, c) // before assertCleanedUp's own API calls
	assertCleanedUp(t, c)
	wantVerbs(t, c, []string{"create secrets", "create jobs", "list pods", "watch pods", "delete jobs", "delete secrets"})
}

// A pod whose image cannot be pulled is named; the others' data is kept;
// nothing is left in the cluster.
func TestIndexedJobPodThatCannotStart(t *testing.T) {
	c := fake.NewClientset()
	k := newKubelet(t, c, map[int]bool{1: true})
	l := fleettest.Load{Values: 1000, Seed: 22, Ms: 300, Windows: 1, DieAgent: -1}
	m, err := fleet.Run(context.Background(), launcher(c, k), fleettest.Specs(t, l, 2), runOpts(l))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Incomplete || m.Rows[0].Status != "ok" || !strings.Contains(m.Rows[1].Status, "ErrImagePull") {
		t.Fatalf("rows %q %q", m.Rows[0].Status, m.Rows[1].Status)
	}
	all, _ := fleettest.Oracle(l, []int{0})
	fleettest.SameDistribution(t, m.Hist, all)
	assertCleanedUp(t, c)
}

// A Job the API server refuses leaves no Secret behind.
func TestIndexedJobRefused(t *testing.T) {
	c := fake.NewClientset()
	c.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`jobs.batch is forbidden: exceeded quota: compute`)
	})
	k := newKubelet(t, c, nil)
	l := fleettest.Load{Values: 10, Seed: 24, Ms: 100, Windows: 1, DieAgent: -1}
	_, err := fleet.Run(context.Background(), launcher(c, k), fleettest.Specs(t, l, 2), runOpts(l))
	if err == nil || !strings.Contains(err.Error(), "create Job bench/benchbook-fleet-test: jobs.batch is forbidden") {
		t.Fatalf("got %v, want the API server's refusal of the Job", err)
	}
	assertCleanedUp(t, c)
	wantVerbs(t, c, []string{"create secrets", "create jobs", "delete secrets"})
}

// Ctrl-C while the agents run deletes the Job and the Secret.
func TestIndexedJobInterrupted(t *testing.T) {
	c := fake.NewClientset()
	k := newKubelet(t, c, nil)
	l := fleettest.Load{Values: 1000, Seed: 25, Ms: 20_000, Windows: 1, DieAgent: -1}
	lc := launcher(c, k)
	ctx, cancel := context.WithTimeout(context.Background(), lc.Opts.StartAfter+500*time.Millisecond)
	defer cancel()
	begin := time.Now()
	if _, err := fleet.Run(ctx, lc, fleettest.Specs(t, l, 2), runOpts(l)); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Logf("interrupted run: %v", err)
	}
	if d := time.Since(begin); d > 15*time.Second {
		t.Fatalf("the interrupted run took %v: it did not stop", d)
	}
	checkRBAC(t, c) // before assertCleanedUp's own API calls
	assertCleanedUp(t, c)
	wantVerbs(t, c, []string{"create secrets", "create jobs", "delete jobs", "delete secrets"})
}

// assertCleanedUp finds no Job, Secret or ConfigMap in the namespace (a
// ConfigMap was where the specs were kept before they moved to a Secret).
func assertCleanedUp(t *testing.T, c *fake.Clientset) {
	t.Helper()
	ctx := context.Background()
	jobs, _ := c.BatchV1().Jobs("bench").List(ctx, metav1.ListOptions{})
	secrets, _ := c.CoreV1().Secrets("bench").List(ctx, metav1.ListOptions{})
	cms, _ := c.CoreV1().ConfigMaps("bench").List(ctx, metav1.ListOptions{})
	if len(jobs.Items)+len(secrets.Items)+len(cms.Items) != 0 {
		t.Fatalf("left behind: %d Jobs, %d Secrets, %d ConfigMaps", len(jobs.Items), len(secrets.Items), len(cms.Items))
	}
}

// checkRBAC fails on an API call benchbook made that the Role in
// deploy/rbac.yaml, which the fleets guide tells users to apply, does not allow.
func checkRBAC(t *testing.T, c *fake.Clientset) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatalf("deploy/rbac.yaml: %v", err)
	}
	for _, a := range c.Actions() {
		res := a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			res += "/" + sub
		}
		if !roleAllows(role, a.GetResource().Group, res, a.GetVerb()) {
			t.Errorf("deploy/rbac.yaml does not allow %s %q in group %q, which benchbook did", a.GetVerb(), res, a.GetResource().Group)
		}
	}
}

func roleAllows(role rbacv1.Role, group, resource, verb string) bool {
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func wantVerbs(t *testing.T, c *fake.Clientset, want []string) {
	t.Helper()
	var got []string
	seen := map[string]bool{}
	for _, a := range c.Actions() {
		v := a.GetVerb() + " " + a.GetResource().Resource
		if !seen[v] && a.GetResource().Resource != "" {
			seen[v] = true
			got = append(got, v)
		}
	}
	filtered := got[:0]
	for _, v := range got {
		for _, w := range want {
			if v == w {
				filtered = append(filtered, v)
			}
		}
	}
	if strings.Join(filtered, ", ") != strings.Join(want, ", ") {
		t.Fatalf("API calls in order %q, want %q", filtered, want)
	}
}

// checkManifests compares the Secret and Job benchbook created with
// testdata/*.yaml (go test -update rewrites them). The start instant,
// which moves with the clock, reads START.
func checkManifests(t *testing.T, c *fake.Clientset) {
	t.Helper()
	for _, a := range c.Actions() {
		ca, ok := a.(k8stesting.CreateAction)
		if !ok {
			continue
		}
		res := a.GetResource().Resource
		if res != "jobs" && res != "secrets" {
			continue
		}
		obj := ca.GetObject().(runtime.Object)
		if job, ok := obj.(*batchv1.Job); ok {
			job = job.DeepCopy()
			args := job.Spec.Template.Spec.Containers[0].Args
			args[len(args)-1] = "START"
			obj = job
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", res+".golden.yaml"), b)
	}
}

// A pod the cluster cannot schedule is named hung with the scheduler's
// reason once the start instant and the hang time have passed.
func TestIndexedJobPodNotScheduled(t *testing.T) {
	c := fake.NewClientset()
	k := newKubelet(t, c, nil)
	k.unschedulable = map[int]bool{1: true}
	l := fleettest.Load{Values: 500, Seed: 23, Ms: 300, Windows: 1, DieAgent: -1}
	lc := launcher(c, k)
	lc.Opts.StartAfter = time.Second
	o := runOpts(l)
	o.Hang = time.Second
	m, err := fleet.Run(context.Background(), lc, fleettest.Specs(t, l, 2), o)
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows[0].Status != "ok" || !strings.Contains(m.Rows[1].Status, "not scheduled: Unschedulable: 0/3 nodes are available") {
		t.Fatalf("rows %q %q", m.Rows[0].Status, m.Rows[1].Status)
	}
	assertCleanedUp(t, c)
}

// host_network: the pods share their node's network, so agents reach what
// listens on the node's loopback (bench/k8s's cluster targets a server on
// 127.0.0.1); names still resolve through the cluster's DNS.
func TestIndexedJobHostNetwork(t *testing.T) {
	c := fake.NewClientset()
	k := newKubelet(t, c, nil)
	lc := launcher(c, k)
	lc.Opts.HostNetwork = true
	l := fleettest.Load{Values: 10, Seed: 27, Ms: 100, Windows: 1, DieAgent: -1}
	if _, err := fleet.Run(context.Background(), lc, fleettest.Specs(t, l, 1), runOpts(l)); err != nil {
		t.Fatal(err)
	}
	var job *batchv1.Job
	for _, a := range c.Actions() {
		if ca, ok := a.(k8stesting.CreateAction); ok && a.GetResource().Resource == "jobs" {
			job = ca.GetObject().(*batchv1.Job)
		}
	}
	if job == nil {
		t.Fatal("no Job was created")
	}
	if s := job.Spec.Template.Spec; !s.HostNetwork || s.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Fatalf("hostNetwork %v, dnsPolicy %q: want true, %q", s.HostNetwork, s.DNSPolicy, corev1.DNSClusterFirstWithHostNet)
	}
}

// A pod deleted at once while its agent runs (a node lost, a forced
// delete): the API server sends no terminated state, only the deletion.
// The run ends with the others' data, incomplete, naming the pod.
func TestIndexedJobPodDeleted(t *testing.T) {
	c := fake.NewClientset()
	k := newKubelet(t, c, nil)
	lc := launcher(c, k)
	l := fleettest.Load{Values: 1000, Seed: 28, Ms: 4000, Windows: 1, DieAgent: -1}
	go func() {
		time.Sleep(lc.Opts.StartAfter + time.Second)
		var now int64
		_ = c.CoreV1().Pods("bench").Delete(context.Background(), "benchbook-fleet-test-1-x", metav1.DeleteOptions{GracePeriodSeconds: &now})
	}()
	type result struct {
		m   *fleet.Merged
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := fleet.Run(context.Background(), lc, fleettest.Specs(t, l, 2), runOpts(l))
		done <- result{m, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end within 60 s of a 4 s load whose pod was deleted")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.m.Incomplete || r.m.Rows[0].Status != "ok" || !strings.Contains(r.m.Rows[1].Status, "pod benchbook-fleet-test-1-x was deleted") {
		t.Fatalf("incomplete %v, rows %q %q", r.m.Incomplete, r.m.Rows[0].Status, r.m.Rows[1].Status)
	}
	t.Logf("row 1: %s", r.m.Rows[1].Status)
	assertCleanedUp(t, c)
}
