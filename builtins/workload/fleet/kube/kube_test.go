package kube_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
	"github.com/benchbook/benchbook/builtins/workload/fleet/kube"
	"github.com/benchbook/benchbook/runtime/golden"
)

func TestMain(m *testing.M) {
	fleettest.AgentMain()
	os.Exit(m.Run())
}

// kubelet plays the cluster's side for the fake clientset, which stores
// objects but runs nothing: for each Job it makes the Indexed Job's pods,
// mounts the ConfigMap as files, runs the container's arguments with this
// test binary as the image's benchbook, and serves its stdout as the pod's
// log. Indices in pull fail as an image that cannot be pulled.
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
	cancel        context.CancelFunc
}

func newKubelet(t *testing.T, c *fake.Clientset, pull map[int]bool) *kubelet {
	ctx, cancel := context.WithCancel(context.Background())
	k := &kubelet{t: t, c: c, pull: pull, logs: map[string]io.ReadCloser{}, ready: map[string]chan struct{}{}, cancel: cancel}
	w, err := c.BatchV1().Jobs("bench").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			if job, ok := ev.Object.(*batchv1.Job); ok && ev.Type == "ADDED" {
				k.runJob(ctx, job)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
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

// agentProc is a pod's agent process; exited closes once its Wait returned.
type agentProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func (k *kubelet) runJob(ctx context.Context, job *batchv1.Job) {
	cm, err := k.c.CoreV1().ConfigMaps(job.Namespace).Get(ctx, job.Spec.Template.Spec.Volumes[0].ConfigMap.Name, metav1.GetOptions{})
	if err != nil {
		k.t.Errorf("the Job's ConfigMap: %v", err)
		return
	}
	dir := k.t.TempDir()
	for name, data := range cm.Data {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
	}
	for i := range int(*job.Spec.Completions) {
		k.runPod(ctx, job, i, dir)
	}
}

func (k *kubelet) runPod(ctx context.Context, job *batchv1.Job, i int, dir string) {
	name := job.Name + "-" + strconv.Itoa(i) + "-x"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: job.Namespace, Labels: job.Spec.Template.Labels,
		Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": strconv.Itoa(i)}}}
	pods := k.c.CoreV1().Pods(job.Namespace)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent"}}
	if k.unschedulable[i] {
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient cpu."}}
		pod.Status.ContainerStatuses = nil
		_, _ = pods.Create(ctx, pod, metav1.CreateOptions{})
		return
	}
	if k.pull[i] {
		pod.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}
		_, _ = pods.Create(ctx, pod, metav1.CreateOptions{})
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
	k.procs = append(k.procs, agentProc{cmd: cmd, exited: exited})
	k.logs[name] = out
	k.mu.Unlock()
	pod.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{}
	_, _ = pods.Create(ctx, pod, metav1.CreateOptions{})
	go func() {
		err := cmd.Wait()
		close(exited)
		code := int32(0)
		if ee, ok := err.(*exec.ExitError); ok {
			code = int32(ee.ExitCode())
		}
		p := pod.DeepCopy()
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}
		_, _ = pods.Update(context.Background(), p, metav1.UpdateOptions{})
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
	assertCleanedUp(t, c)
	wantVerbs(t, c, []string{"create configmaps", "create jobs", "list pods", "watch pods", "delete jobs", "delete configmaps"})
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

func assertCleanedUp(t *testing.T, c *fake.Clientset) {
	t.Helper()
	jobs, _ := c.BatchV1().Jobs("bench").List(context.Background(), metav1.ListOptions{})
	cms, _ := c.CoreV1().ConfigMaps("bench").List(context.Background(), metav1.ListOptions{})
	if len(jobs.Items)+len(cms.Items) != 0 {
		t.Fatalf("left behind: %d Jobs, %d ConfigMaps", len(jobs.Items), len(cms.Items))
	}
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

// checkManifests compares the ConfigMap and Job benchbook created with
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
		if res != "jobs" && res != "configmaps" {
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
