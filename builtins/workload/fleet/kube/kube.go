// Package kube runs a fleet's agents as a Kubernetes Indexed Job (the
// k6-operator model). The agents' specs go in a Secret (a workload.sql spec
// holds its DSN, password included), with one pod per agent (its completion
// index picks its spec) and one start instant in the pod's arguments;
// results are read from each pod's log, and the Job and Secret are deleted
// afterwards, whatever happened.
//
// The cluster schedules the machines; nothing here stands in for it.
package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
)

// Options say where and how the agents run.
type Options struct {
	Namespace    string            // default: the kubeconfig context's, else "default"
	Image        string            // an image whose benchbook runs `benchbook agent` (see Dockerfile.agent)
	CPU          string            // request = limit, e.g. "1"; "" leaves it to the cluster
	Memory       string            // request = limit, e.g. "512Mi"
	NodeSelector map[string]string // e.g. {"pool": "loadgen"}
	// StartAfter is how far ahead the common start instant lies: time for
	// the pods to be scheduled and their image pulled. Default 60 s.
	StartAfter time.Duration
	// Deadline bounds the Job (activeDeadlineSeconds), so pods stop even if
	// benchbook dies before deleting it.
	Deadline time.Duration
	// HostNetwork runs the pods in their node's network namespace: the
	// agents' traffic leaves from the node's addresses, and they reach
	// what listens on the node's loopback.
	HostNetwork bool
}

// Launcher starts the agents of one fleet run in a cluster.
type Launcher struct {
	Client kubernetes.Interface
	Opts   Options
	// Name of the Job and Secret; default benchbook-fleet-<random>.
	Name string
	// Logs opens a pod's log, following it; default: the API's pod log.
	Logs func(ctx context.Context, namespace, pod string) (io.ReadCloser, error)
	// Now is the clock the start instant is taken from (a test fixes it).
	Now func() time.Time

	created []func(context.Context) error // deletions, newest first
	cancel  context.CancelFunc
}

// Client connects as kubectl does: $KUBECONFIG, else ~/.kube/config, else
// the in-cluster service account. It also returns the context's namespace.
func Client() (kubernetes.Interface, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	rc, err := cfg.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubernetes: no cluster configuration (KUBECONFIG, ~/.kube/config or in-cluster): %w", err)
	}
	ns, _, err := cfg.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubernetes: %w", err)
	}
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, "", fmt.Errorf("kubernetes: %w", err)
	}
	return c, ns, nil
}

// Launch creates the Secret and the Job and returns one agent per
// completion index, whose output is its pod's log once the pod runs.
func (l *Launcher) Launch(ctx context.Context, specs []fleet.Spec) ([]*fleet.Agent, error) {
	if l.Opts.Image == "" {
		return nil, errors.New("kubernetes: image is required (an image with benchbook in it: see Dockerfile.agent)")
	}
	l.defaults()
	at := l.Now().Add(l.Opts.StartAfter).Truncate(time.Millisecond)
	sec, err := specSecret(l.Name, l.Opts.Namespace, specs)
	if err != nil {
		return nil, err
	}
	job, err := indexedJob(l.Name, l.Opts, len(specs), at)
	if err != nil {
		return nil, err
	}
	if err := l.create(ctx, sec, job); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	pods := newPodWatch(l, len(specs))
	go pods.run(wctx)
	agents := make([]*fleet.Agent, len(specs))
	for i := range specs {
		agents[i] = pods.agent(wctx, i, at)
	}
	return agents, nil
}

func (l *Launcher) defaults() {
	if l.Name == "" {
		var b [3]byte
		_, _ = rand.Read(b[:])
		l.Name = "benchbook-fleet-" + hex.EncodeToString(b[:])
	}
	if l.Opts.Namespace == "" {
		l.Opts.Namespace = "default"
	}
	if l.Opts.StartAfter <= 0 {
		l.Opts.StartAfter = time.Minute
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	if l.Logs == nil {
		l.Logs = func(ctx context.Context, ns, pod string) (io.ReadCloser, error) {
			return l.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Follow: true}).Stream(ctx)
		}
	}
}

// create makes the Secret, then the Job, remembering each for Close.
func (l *Launcher) create(ctx context.Context, sec *corev1.Secret, job *batchv1.Job) error {
	ns := l.Opts.Namespace
	if _, err := l.Client.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kubernetes: create Secret %s/%s: %w", ns, sec.Name, err)
	}
	l.created = append(l.created, func(ctx context.Context) error {
		return l.Client.CoreV1().Secrets(ns).Delete(ctx, sec.Name, metav1.DeleteOptions{})
	})
	if _, err := l.Client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kubernetes: create Job %s/%s: %w", ns, job.Name, err)
	}
	bg := metav1.DeletePropagationBackground // the Job's pods go with it
	l.created = append(l.created, func(ctx context.Context) error {
		return l.Client.BatchV1().Jobs(ns).Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	})
	return nil
}

// Close deletes the Job (and so its pods) and the Secret.
func (l *Launcher) Close(ctx context.Context) error {
	if l.cancel != nil {
		l.cancel()
	}
	var errs []error
	for i := len(l.created) - 1; i >= 0; i-- {
		errs = append(errs, l.created[i](ctx))
	}
	l.created = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kubernetes: clean up %s: %w", l.Name, err)
	}
	return nil
}

const (
	labelFleet = "benchbook.dev/fleet"
	specDir    = "/etc/benchbook"
	// agentGroup is the group the spec files are readable by: the
	// distroless nonroot user's of deploy/Dockerfile, given to the pod as
	// its fsGroup.
	agentGroup = 65532
)

// specSecret holds the agents' specs, one file each. A Secret, not a
// ConfigMap: a workload.sql spec holds its DSN, password included; RBAC
// commonly lets more people read ConfigMaps than Secrets, and `kubectl
// describe` prints a ConfigMap's data but only a Secret's sizes.
func specSecret(name, ns string, specs []fleet.Spec) (*corev1.Secret, error) {
	data := map[string][]byte{}
	for i, s := range specs {
		b, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: spec %d: %w", i, err)
		}
		data["spec-"+strconv.Itoa(i)+".json"] = b
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{labelFleet: name}},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}, nil
}

// specVolume mounts the Secret's files owner-read-only (0400). The kubelet
// makes them root's, so the pod gets agentGroup as its fsGroup: the
// kubelet then gives the files that group and adds group read (0440 on a
// read-only volume), and the agent, which does not run as root, reads them.
func specVolume(name string) (corev1.Volume, *corev1.PodSecurityContext) {
	mode := int32(0o400)
	group := int64(agentGroup)
	v := corev1.Volume{Name: "spec", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: name, DefaultMode: &mode}}}
	return v, &corev1.PodSecurityContext{FSGroup: &group}
}

// indexedJob is n pods, each `benchbook agent` on the spec of its index,
// never retried: a failed agent is reported, not replaced mid-run. The
// limit is per index: with a Job-wide backoffLimit of 0, one pod's failure
// failed the Job and the Job controller then terminated every other pod
// (on a real cluster, a pod deleted mid-run stopped both agents of two).
func indexedJob(name string, o Options, n int, at time.Time) (*batchv1.Job, error) {
	res, err := resources(o)
	if err != nil {
		return nil, err
	}
	count := int32(n)
	var noRetry int32
	indexed := batchv1.IndexedCompletion
	vol, security := specVolume(name)
	noToken := false
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: map[string]string{labelFleet: name}},
		Spec: batchv1.JobSpec{
			Completions: &count, Parallelism: &count, CompletionMode: &indexed, BackoffLimitPerIndex: &noRetry,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{labelFleet: name}},
				Spec: corev1.PodSpec{
					RestartPolicy:   corev1.RestartPolicyNever,
					NodeSelector:    o.NodeSelector,
					SecurityContext: security,
					// The agent never calls the API: its pod holds no token.
					AutomountServiceAccountToken: &noToken,
					HostNetwork:                  o.HostNetwork,
					Containers: []corev1.Container{{
						Name: "agent", Image: o.Image, Resources: res,
						// Kubernetes expands $(JOB_COMPLETION_INDEX), set in every pod of an Indexed Job.
						Args: []string{"agent", "-spec", specDir + "/spec-$(JOB_COMPLETION_INDEX).json",
							"-start-at", at.UTC().Format(time.RFC3339Nano)},
						VolumeMounts: []corev1.VolumeMount{{Name: vol.Name, MountPath: specDir, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{vol},
				},
			},
		},
	}
	if o.HostNetwork { // names resolve as they would without it
		job.Spec.Template.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	ttl := int32(600) // a safety net: the API server removes a finished Job that benchbook could not
	job.Spec.TTLSecondsAfterFinished = &ttl
	if o.Deadline > 0 {
		secs := int64(o.Deadline.Seconds())
		job.Spec.ActiveDeadlineSeconds = &secs
	}
	return job, nil
}

func resources(o Options) (corev1.ResourceRequirements, error) {
	list := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: o.CPU, corev1.ResourceMemory: o.Memory} {
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return corev1.ResourceRequirements{}, fmt.Errorf("kubernetes: %s: malformed quantity %q", name, v)
		}
		list[name] = q
	}
	if len(list) == 0 {
		return corev1.ResourceRequirements{}, nil
	}
	return corev1.ResourceRequirements{Requests: list, Limits: list}, nil
}
