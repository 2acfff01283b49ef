package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
)

// indexAnnotation names the pod's completion index in an Indexed Job.
const indexAnnotation = "batch.kubernetes.io/job-completion-index"

// podWatch follows the Job's pods and hands each index its newest state.
type podWatch struct {
	l     *Launcher
	slots []*podSlot
}

// podSlot holds the newest state of one index's pod.
type podSlot struct {
	mu     sync.Mutex
	pod    *corev1.Pod
	gone   bool          // the pod was deleted: no later state will come
	notify chan struct{} // one pending wake-up
}

func newPodWatch(l *Launcher, n int) *podWatch {
	w := &podWatch{l: l}
	for range n {
		w.slots = append(w.slots, &podSlot{notify: make(chan struct{}, 1)})
	}
	return w
}

// run lists then watches the Job's pods until ctx ends, rewatching when the
// API server closes a watch (it does every few minutes).
func (w *podWatch) run(ctx context.Context) {
	sel := metav1.ListOptions{LabelSelector: labelFleet + "=" + w.l.Name}
	pods := w.l.Client.CoreV1().Pods(w.l.Opts.Namespace)
	for ctx.Err() == nil {
		list, err := pods.List(ctx, sel)
		if err == nil {
			w.missing(list.Items) // deleted while no watch was open
			for i := range list.Items {
				w.update(&list.Items[i])
			}
			sel.ResourceVersion = list.ResourceVersion
			if wi, err := pods.Watch(ctx, sel); err == nil {
				w.follow(ctx, wi)
			}
			sel.ResourceVersion = ""
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (w *podWatch) follow(ctx context.Context, wi watch.Interface) {
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			if p, ok := ev.Object.(*corev1.Pod); ok {
				if ev.Type == watch.Deleted {
					w.deleted(p)
				} else {
					w.update(p)
				}
			}
		}
	}
}

func (w *podWatch) update(p *corev1.Pod) {
	if s := w.slot(p); s != nil {
		s.set(p, false)
	}
}

// deleted takes a pod's deletion: the last state it had is all there
// will be (a pod deleted at once, by a forced delete or with its node,
// never reports its container's end).
func (w *podWatch) deleted(p *corev1.Pod) {
	if s := w.slot(p); s != nil {
		s.set(p, true)
	}
}

// missing marks deleted the pods a list no longer has.
func (w *podWatch) missing(listed []corev1.Pod) {
	for _, s := range w.slots {
		s.mu.Lock()
		p := s.pod
		s.mu.Unlock()
		if p != nil && !slices.ContainsFunc(listed, func(l corev1.Pod) bool { return l.UID == p.UID }) {
			s.set(p, true)
		}
	}
}

func (w *podWatch) slot(p *corev1.Pod) *podSlot {
	i, err := strconv.Atoi(p.Annotations[indexAnnotation])
	if err != nil || i < 0 || i >= len(w.slots) {
		return nil
	}
	return w.slots[i]
}

func (s *podSlot) set(p *corev1.Pod, gone bool) {
	s.mu.Lock()
	s.pod = p
	s.gone = s.gone || gone
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// until waits for a pod state that ok accepts; a pod stuck on an error
// that will not clear by itself (image not found), or deleted before it
// got there, fails.
func (s *podSlot) until(ctx context.Context, ok func(*corev1.Pod) bool) (*corev1.Pod, error) {
	for {
		s.mu.Lock()
		p, gone := s.pod, s.gone
		s.mu.Unlock()
		if p != nil && ok(p) {
			return p, nil
		}
		if gone {
			return p, fmt.Errorf("pod %s was deleted while its agent ran (%s)", p.Name, phase(p))
		}
		if p != nil {
			if err := stuck(p); err != nil {
				return p, err
			}
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-s.notify:
		}
	}
}

// stuck reports a container waiting for something only a person can fix.
func stuck(p *corev1.Pod) error {
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
				return fmt.Errorf("pod %s: %s: %s", p.Name, w.Reason, w.Message)
			}
		}
	}
	return nil
}

func started(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running != nil || c.State.Terminated != nil {
			return true
		}
	}
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// terminated returns the agent container's end, nil while it runs.
func terminated(p *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Terminated != nil {
			return c.State.Terminated
		}
	}
	return nil
}

// agent is index i: its output is its pod's log from when the pod starts.
func (w *podWatch) agent(ctx context.Context, i int, at time.Time) *fleet.Agent {
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	p := &podAgent{w: w, slot: w.slots[i], done: make(chan struct{}), cancel: cancel, out: pr}
	go p.follow(ctx, pw)
	return &fleet.Agent{Name: fmt.Sprintf("kubernetes/%s-%d", w.l.Name, i), Out: pr, At: at, Wait: p.wait, Kill: p.kill,
		Describe: p.slot.describe}
}

type podAgent struct {
	w      *podWatch
	slot   *podSlot
	done   chan struct{}
	err    error
	cancel context.CancelFunc
	out    *io.PipeReader // what the coordinator reads; closed by kill
	once   sync.Once
}

func (p *podAgent) follow(ctx context.Context, pw *io.PipeWriter) {
	defer close(p.done)
	p.err = p.stream(ctx, pw)
	// The end of the log, not the error: Wait reports that, once (the
	// coordinator words an error in the stream as a second cause).
	pw.Close()
}

// stream copies the pod's log, then waits for its container's exit.
func (p *podAgent) stream(ctx context.Context, pw io.Writer) error {
	pod, err := p.slot.until(ctx, started)
	if err != nil {
		return err
	}
	logs, err := p.w.l.Logs(ctx, pod.Namespace, pod.Name)
	if err != nil {
		return fmt.Errorf("pod %s: logs: %w", pod.Name, err)
	}
	_, err = io.Copy(pw, logs)
	logs.Close()
	if err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return &fleet.LostError{Detail: fmt.Sprintf("pod %s: log stream: %v", pod.Name, err)}
	}
	pod, err = p.slot.until(ctx, func(p *corev1.Pod) bool { return terminated(p) != nil })
	if err != nil {
		return err
	}
	if t := terminated(pod); t.ExitCode != 0 {
		return fmt.Errorf("pod %s: exit code %d (%s) %s", pod.Name, t.ExitCode, t.Reason, t.Message)
	}
	return nil
}

func (p *podAgent) wait() error {
	<-p.done
	return p.err
}

// kill deletes the pod at once and stops following it.
func (p *podAgent) kill() {
	p.once.Do(func() {
		p.slot.mu.Lock()
		pod := p.slot.pod
		p.slot.mu.Unlock()
		if pod != nil {
			var now int64
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = p.w.l.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &now})
			cancel()
		}
		p.cancel()
		// A log copy blocked writing to a coordinator that stopped reading
		// would never see the cancel: closing the pipe ends it.
		p.out.CloseWithError(errKilled)
	})
}

var errKilled = errors.New("agent killed")

// phase words a pod's last known phase.
func phase(p *corev1.Pod) string {
	if p.Status.Phase == "" {
		return "no phase reported"
	}
	return "last seen " + string(p.Status.Phase)
}

// describe says where the index's pod stands, for an agent that went
// silent: no pod yet (quota, admission), unscheduled, deleted, or its phase.
func (s *podSlot) describe() string {
	s.mu.Lock()
	p, gone := s.pod, s.gone
	s.mu.Unlock()
	if p == nil {
		return "no pod was created for it: check the Job's events (quota, admission)"
	}
	if gone || p.DeletionTimestamp != nil {
		return fmt.Sprintf("pod %s was deleted (%s)", p.Name, phase(p))
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return fmt.Sprintf("pod %s not scheduled: %s: %s", p.Name, c.Reason, c.Message)
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			return fmt.Sprintf("pod %s %s: %s", p.Name, p.Status.Phase, w.Reason)
		}
	}
	return fmt.Sprintf("pod %s %s", p.Name, p.Status.Phase)
}
