//go:build kubernetes

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/kube"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// These tests run on a real cluster: bench/k8s/cluster.sh up (or any
// cluster whose nodes can reach this machine's loopback, i.e. this one),
// KUBECONFIG and BENCHBOOK_AGENT_IMAGE as it prints them. .ci/run runs
// them so, after the test command; without a cluster they skip.

const kubeNB = `# %% fleet
agents = workload.agents(kubernetes = {"image": param("image", ""), "replicas": 2, "host_network": True,
                                       "start_after": "15s"}, hang = "5s")

# %% load
r = workload.http(param("url", ""), clients = 4, duration = param("duration", "3s"), warmup = "0s", agents = agents)

# %% figures
figures = {"count": r.count, "errors": r.errors, "p99": r.p(99), "incomplete": r.incomplete, "warnings": r.warnings,
           "agents": [{"name": a.name, "status": a.status, "count": a.count} for a in r.agents]}
figures
`

// figures is the notebook's last cell's output, read back from its JSON
// record.
type figures struct {
	Count      int64            `json:"count"`
	Errors     map[string]int64 `json:"errors"`
	P99        float64          `json:"p99"`
	Incomplete bool             `json:"incomplete"`
	Warnings   []string         `json:"warnings"`
	Agents     []struct {
		Name, Status string
		Count        int64
	} `json:"agents"`
}

// A notebook's load from two pods of an Indexed Job on a real scheduler and
// kubelet, against a server on this machine's loopback (the pods use the
// node's network): nothing is lost between the agents and the merged run.
// The oracles are outside the merge: the server's own count of the
// requests it answered, and the agents' results as they came out of the
// pods' logs, whose histograms' union gives the p99 value by value.
func TestKubernetesNotebook(t *testing.T) {
	c, ns, image := realCluster(t)
	url, hits := counting(t)
	tee := teeKubernetes(t)
	nb := writeNB(t, kubeNB)
	f, stderr := runKubeNB(t, nb, "url="+url, "image="+image)
	if f.Incomplete || len(f.Agents) != 2 {
		t.Fatalf("incomplete %v, agents %+v, warnings %q\n%s", f.Incomplete, f.Agents, f.Warnings, stderr)
	}
	reports := tee.reports(t)
	if len(reports) != 2 {
		t.Fatalf("%d results in the pods' logs, want 2", len(reports))
	}
	var sum int64
	var union [][2]int64 // (highest equivalent value µs, count): every agent's recorded values
	for _, rep := range reports {
		sum += rep.Run.Count
		for _, b := range rep.Run.Hist.Distribution() {
			if b.Count > 0 {
				union = append(union, [2]int64{b.To, b.Count})
			}
		}
	}
	errs := loadgen.SumErrors(f.Errors)
	if f.Count == 0 || f.Count != sum || f.Count+errs != hits.Load() {
		t.Fatalf("merged count %d (+%d errors), the agents' counts add to %d, the server answered %d", f.Count, errs, sum, hits.Load())
	}
	if want := unionQuantile(union, 99); f.P99 != loadgen.UsToMs(want) {
		t.Fatalf("merged p99 %g ms, the p99 of the union of the agents' histograms %g ms", f.P99, loadgen.UsToMs(want))
	}
	t.Logf("%d requests from 2 pods (%d and %d), p99 %.3f ms", f.Count, f.Agents[0].Count, f.Agents[1].Count, f.P99)
	assertNothingLeft(t, c, ns)
}

// A pod killed mid-run (deleted at once, as a node that fails or an
// operator's --force does): the run ends, says which agent was lost and is
// incomplete, keeps the other agent's figures, and nothing of it is left.
func TestKubernetesNotebookPodKilled(t *testing.T) {
	c, ns, image := realCluster(t)
	url, hits := counting(t)
	teeKubernetes(t)
	nb := writeNB(t, kubeNB)
	killed := make(chan string, 1)
	go func() {
		// Once the load runs (the server answers), delete index 1's pod.
		deadline := time.Now().Add(90 * time.Second)
		for hits.Load() < 100 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		pods, err := c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "benchbook.dev/fleet"})
		if err != nil {
			killed <- "list: " + err.Error()
			return
		}
		for _, p := range pods.Items {
			if p.Annotations["batch.kubernetes.io/job-completion-index"] == "1" && p.DeletionTimestamp == nil {
				var now int64
				err := c.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &now})
				killed <- fmt.Sprintf("%s %v", p.Name, err)
				return
			}
		}
		killed <- "no pod of index 1"
	}()
	begin := time.Now()
	f, stderr := runKubeNB(t, nb, "url="+url, "image="+image, "duration=12s")
	took := time.Since(begin)
	k := <-killed
	t.Logf("deleted %s; the run took %s", k, took.Round(time.Millisecond))
	if !strings.HasSuffix(k, " <nil>") {
		t.Fatalf("deleting the pod: %s", k)
	}
	pod := strings.Fields(k)[0]
	if !f.Incomplete || len(f.Agents) != 2 || f.Agents[0].Status != "ok" || !strings.Contains(f.Agents[1].Status, pod) {
		t.Fatalf("incomplete %v, agents %+v: want incomplete, index 1's row naming pod %s\n%s", f.Incomplete, f.Agents, pod, stderr)
	}
	if !slices.ContainsFunc(f.Warnings, func(w string) bool {
		return strings.Contains(w, "incomplete: agent "+f.Agents[1].Name)
	}) {
		t.Fatalf("no warning names the lost agent %s: %q", f.Agents[1].Name, f.Warnings)
	}
	t.Logf("row of index 1: %s", f.Agents[1].Status)
	if f.Count != f.Agents[0].Count || f.Count == 0 {
		t.Fatalf("merged count %d, the surviving agent's %d", f.Count, f.Agents[0].Count)
	}
	assertNothingLeft(t, c, ns)
}

func realCluster(t *testing.T) (kubernetes.Interface, string, string) {
	image := os.Getenv("BENCHBOOK_AGENT_IMAGE")
	if os.Getenv("KUBECONFIG") == "" || image == "" {
		t.Skip("needs a cluster: eval \"$(bench/k8s/cluster.sh up)\" sets KUBECONFIG and BENCHBOOK_AGENT_IMAGE")
	}
	c, ns, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	return c, ns, image
}

// counting is a loopback server that counts the requests it answered.
func counting(t *testing.T) (string, *atomic.Int64) {
	hits := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", hits
}

// runKubeNB runs the notebook as `benchbook run -format json` does, in
// this process, and returns its figures cell.
func runKubeNB(t *testing.T, nb string, params ...string) (figures, string) {
	t.Helper()
	args := []string{"run", "-no-color", "-format", "json"}
	for _, p := range params {
		args = append(args, "-p", p)
	}
	done := make(chan struct{})
	var stderr string
	go func() {
		defer close(done)
		_, _, stderr = runCLI(t, append(args, nb)...)
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the notebook did not end within 3 minutes")
	}
	b, err := os.ReadFile(strings.TrimSuffix(nb, ".star") + ".json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var rec struct {
		Cells []struct {
			Name    string `json:"name"`
			Outputs []struct {
				Value json.RawMessage `json:"value"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.Cells {
		if c.Name == "figures" && len(c.Outputs) == 1 {
			var f figures
			if err := json.Unmarshal(c.Outputs[0].Value, &f); err != nil {
				t.Fatal(err)
			}
			return f, stderr
		}
	}
	t.Fatalf("no figures in the record:\n%s", stderr)
	return figures{}, ""
}

// tee keeps every agent's stream as the coordinator read it from the pod's
// log: the agents' own results, before any merge.
type tee struct {
	fleet.Launcher
	mu   sync.Mutex
	logs []*bytes.Buffer
}

// teeKubernetes wraps the kubernetes launcher of the notebooks this test
// runs.
func teeKubernetes(t *testing.T) *tee {
	prev := kubernetesLauncher
	tl := &tee{}
	kubernetesLauncher = func(o, selector map[string]string, run time.Duration) (fleet.Launcher, error) {
		l, err := prev(o, selector, run)
		tl.Launcher = l
		return tl, err
	}
	t.Cleanup(func() { kubernetesLauncher = prev })
	return tl
}

func (tl *tee) Launch(ctx context.Context, specs []fleet.Spec) ([]*fleet.Agent, error) {
	agents, err := tl.Launcher.Launch(ctx, specs)
	for _, a := range agents {
		b := new(bytes.Buffer)
		tl.mu.Lock()
		tl.logs = append(tl.logs, b)
		tl.mu.Unlock()
		a.Out = io.TeeReader(a.Out, lockedBuffer{&tl.mu, b})
	}
	return agents, err
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// reports are the agents' results, decoded from their streams.
func (tl *tee) reports(t *testing.T) []*fleet.Report {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []*fleet.Report
	for _, b := range tl.logs {
		sc := bufio.NewScanner(bytes.NewReader(b.Bytes()))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m fleet.Message
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Type == "result" && m.Result != nil && m.Result.Run != nil {
				out = append(out, m.Result)
			}
		}
	}
	return out
}

// unionQuantile is the q-th percentile of every value in bars, by
// enumeration: the value whose rank is HdrHistogram's (q/100 of the count,
// rounded, at least 1), reported as the highest value equivalent to it.
func unionQuantile(bars [][2]int64, q float64) int64 {
	slices.SortFunc(bars, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var n int64
	for _, b := range bars {
		n += b[1]
	}
	rank := min(max(int64(q/100*float64(n)+0.5), 1), n)
	for _, b := range bars {
		if rank -= b[1]; rank <= 0 {
			return b[0]
		}
	}
	return 0
}

// assertNothingLeft: no Job, Secret, ConfigMap or pod of a fleet is left
// in the namespace (pods go with their Job, within seconds).
func assertNothingLeft(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: "benchbook.dev/fleet"}
	var left string
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		jobs, err1 := c.BatchV1().Jobs(ns).List(ctx, sel)
		secrets, err2 := c.CoreV1().Secrets(ns).List(ctx, sel)
		cms, err3 := c.CoreV1().ConfigMaps(ns).List(ctx, sel)
		pods, err4 := c.CoreV1().Pods(ns).List(ctx, sel)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			t.Fatal(err1, err2, err3, err4)
		}
		left = fmt.Sprintf("%d Jobs, %d Secrets, %d ConfigMaps, %d pods (%s)", len(jobs.Items), len(secrets.Items),
			len(cms.Items), len(pods.Items), podNames(pods.Items))
		if len(jobs.Items)+len(secrets.Items)+len(cms.Items)+len(pods.Items) == 0 {
			return
		}
	}
	t.Fatalf("left behind in %s after 60 s: %s", ns, left)
}

func podNames(pods []corev1.Pod) string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name+" "+string(p.Status.Phase))
	}
	return strings.Join(names, ", ")
}
