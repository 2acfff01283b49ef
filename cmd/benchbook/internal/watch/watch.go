// Package watch is benchbook watch: a notebook rerun on every save, its
// record rewritten and, optionally, served with a page that reloads.
package watch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchbook/benchbook/cmd/benchbook/internal/report"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/bytesize"
	"github.com/benchbook/benchbook/runtime/limits"
)

// watchInterval is how often watch looks at the notebook file. Polling the
// mtime and size (and hashing on a change) needs no file-notification
// dependency and survives editors that save by renaming a new file.
const watchInterval = 200 * time.Millisecond

// Options is what the command hands watch.
type Options struct {
	Path   string // the notebook's file, polled for changes
	Dest   string // the record's path
	Serve  string // a loopback address to serve the record at (CheckLoopback); "" serves nothing
	Stdout io.Writer
	Stderr io.Writer
}

// Run runs the stale cells of the open engine and writes the record, then
// on every change of the notebook's file reruns the changed cells and
// their dependents and rewrites the record, until ctx is done.
func Run(ctx context.Context, e *runtime.Engine, opts Options) error {
	w := &watcher{e: e, path: opts.Path, dest: opts.Dest, out: opts.Stdout, errw: opts.Stderr}
	if opts.Serve != "" {
		srv, err := startRecordServer(ctx, opts.Serve)
		if err != nil {
			return err
		}
		defer srv.close()
		w.srv = srv
		fmt.Fprintf(opts.Stdout, "serving http://%s/\n", srv.addr)
	}
	return w.loop(ctx)
}

// watcher reruns a notebook when its file changes.
type watcher struct {
	e    *runtime.Engine
	path string
	dest string
	out  io.Writer
	errw io.Writer
	srv  *recordServer // nil without -serve

	mtime time.Time
	size  int64
	hash  [sha256.Size]byte
}

// loop runs once, then after every change, until ctx is done.
func (w *watcher) loop(ctx context.Context) error {
	if _, err := w.changed(); err != nil {
		return err
	}
	w.cycle(ctx)
	fmt.Fprintf(w.out, "watching %s (Ctrl-C stops)\n", w.path)
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		changed, err := w.changed()
		if err != nil {
			fmt.Fprintf(w.errw, "watch: %v\n", err)
			continue
		}
		if changed && w.reload() {
			w.cycle(ctx)
		}
	}
}

// changed reports whether the file's content differs from what was last
// seen; a changed mtime with the same content (touch, a save without edits)
// is not a change.
func (w *watcher) changed() (bool, error) {
	st, err := os.Stat(w.path)
	if err != nil {
		return false, err
	}
	if st.ModTime().Equal(w.mtime) && st.Size() == w.size {
		return false, nil
	}
	src, err := limits.ReadFile(w.path, limits.File)
	if err != nil {
		return false, err
	}
	w.mtime, w.size = st.ModTime(), st.Size()
	sum := sha256.Sum256(src)
	if sum == w.hash {
		return false, nil
	}
	w.hash = sum
	return true, nil
}

// reload parses the edited file and swaps it in; a file that does not parse
// (a save in the middle of an edit) is reported and the last good one kept.
func (w *watcher) reload() bool {
	var ed runtime.Edit
	nb, err := runtime.ParseFile(w.path)
	if err == nil {
		ed, err = w.e.Reload(nb)
	}
	if err != nil {
		fmt.Fprintf(w.errw, "%v\n(keeping the last version that parsed)\n", err)
		if w.srv != nil { // the page must not go on showing the old record silently
			w.srv.setProblem(err.Error())
		}
		return false
	}
	fmt.Fprintf(w.out, "%s %s\n", time.Now().Format("15:04:05"), report.Edit(ed))
	return true
}

// cycle runs what is stale, says which cells ran, and rewrites the record.
func (w *watcher) cycle(ctx context.Context) {
	w.e.SetContext(ctx)
	w.e.Run(true)
	var ran, failed []string
	for _, st := range w.e.CellRuns() {
		switch {
		case st.Status == runtime.StatusRan:
			ran = append(ran, st.Def.Name)
		case st.Status == runtime.StatusError:
			failed = append(failed, st.Def.Name)
		case st.Status == runtime.StatusLive && st.Executed:
			ran = append(ran, st.Def.Name)
		}
	}
	line := "ran: " + report.OrNone(ran)
	if len(failed) > 0 {
		line += "; failed: " + strings.Join(failed, ", ")
	}
	fmt.Fprintln(w.out, line)
	w.write()
}

func (w *watcher) write() {
	size, err := report.WriteRecord(w.e.Record(), w.dest, "html")
	if err != nil {
		fmt.Fprintf(w.errw, "watch: %v\n", err)
		return
	}
	if w.srv != nil { // publish first: once "wrote" shows, the page is current
		page, err := os.ReadFile(w.dest)
		if err != nil {
			fmt.Fprintf(w.errw, "watch: %v\n", err)
			return
		}
		w.srv.publish(bytes.Clone(page))
	}
	fmt.Fprintf(w.out, "wrote %s (%s)\n", w.dest, bytesize.Format(size))
}

// CheckLoopback refuses addresses other than loopback ones: the record holds
// host details and measured data, and the server has no authentication.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-serve %s: %v (want host:port, e.g. 127.0.0.1:8000)", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-serve %s: only loopback addresses are served (127.0.0.1, [::1], localhost)", addr)
}

// recordServer serves the latest record with a small script that reloads
// the page when a newer one is published. The script is only in the served
// copy; the file on disk stays self-contained and static.
type recordServer struct {
	addr string
	srv  *http.Server
	done chan struct{}

	mu      sync.Mutex
	page    []byte
	problem string // why the page shows an older record ("" when current)
	version int
	changed chan struct{} // closed and replaced at each publish
}

func startRecordServer(ctx context.Context, addr string) (*recordServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	s := &recordServer{addr: ln.Addr().String(), done: make(chan struct{}), changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /version", s.serveVersion)
	s.srv = &http.Server{Handler: onlyHosts(ln.Addr().(*net.TCPAddr), mux), ReadHeaderTimeout: 5 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s, nil
}

// onlyHosts serves only requests whose Host header is the address the
// server listens on or "localhost", at its port. A page at a DNS name its
// owner rebinds to 127.0.0.1 is same-origin with the server as far as the
// browser knows, and could read the whole record; its requests carry that
// name in Host, which is how they are told apart.
func onlyHosts(addr *net.TCPAddr, next http.Handler) http.Handler {
	port := strconv.Itoa(addr.Port)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, p, err := net.SplitHostPort(r.Host)
		if err != nil {
			host, p = r.Host, "" // no port: HTTP/1.0, or port 80
		}
		ip := net.ParseIP(host)
		ok := (strings.EqualFold(host, "localhost") || (ip != nil && ip.Equal(addr.IP))) && (p == port || (p == "" && port == "80"))
		if !ok {
			http.Error(w, fmt.Sprintf("Host %q is not this server: it answers %s and localhost:%s only", r.Host, addr, port), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *recordServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		s.srv.Close()
	}
	<-s.done
}

// publish makes page the served record and wakes the waiting pages.
func (s *recordServer) publish(page []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.page, s.problem = page, ""
	s.bump()
}

// setProblem shows msg above the record until the next publish: the
// notebook as saved does not parse, so the record is of an older version.
func (s *recordServer) setProblem(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problem = msg
	s.bump()
}

// bump announces a new version to the waiting pages; s.mu is held.
func (s *recordServer) bump() {
	s.version++
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *recordServer) current() ([]byte, int, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return withProblem(s.page, s.problem), s.version, s.changed
}

// withProblem puts a banner with msg at the top of the page's body.
func withProblem(page []byte, msg string) []byte {
	if msg == "" || page == nil {
		return page
	}
	banner := `<div role="alert" style="border:2px solid #c62828;background:#fdecea;color:#1d1d1f;padding:.6rem 1rem;margin:1rem">` +
		`<strong>The notebook as saved has an error; this page shows the last version that ran.</strong>` +
		`<pre style="white-space:pre-wrap;margin:.4rem 0 0">` + html.EscapeString(msg) + `</pre></div>`
	i := bytes.Index(page, []byte("<body>"))
	if i < 0 {
		return append([]byte(banner), page...)
	}
	i += len("<body>")
	out := make([]byte, 0, len(page)+len(banner))
	out = append(out, page[:i]...)
	out = append(out, banner...)
	return append(out, page[i:]...)
}

func (s *recordServer) servePage(w http.ResponseWriter, r *http.Request) {
	page, version, _ := s.current()
	if page == nil {
		http.Error(w, "the record is not written yet; reload in a moment", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(withReloadScript(page, version))
}

// serveVersion answers the page's poll with the current version; given
// ?since=N it waits (up to 25 s) for a version other than N, so a page learns
// of a new record at once without polling often.
func (s *recordServer) serveVersion(w http.ResponseWriter, r *http.Request) {
	_, version, changed := s.current()
	if since, err := strconv.Atoi(r.URL.Query().Get("since")); err == nil && since == version {
		select {
		case <-changed:
		case <-time.After(25 * time.Second):
		case <-r.Context().Done():
			return
		}
		_, version, _ = s.current()
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, version)
}

// reloadScript polls /version and reloads the page when it differs from
// the version the page was served at.
const reloadScript = `(function(){var v=%d;function poll(){fetch("/version?since="+v,{cache:"no-store"}).then(function(r){return r.text()}).then(function(t){if(+t!==v){location.reload()}else{poll()}}).catch(function(){setTimeout(poll,1000)})}poll()})();`

// cspNone is how the record's Content-Security-Policy starts: no scripts,
// no fetches.
const cspNone = "default-src 'none';"

// withReloadScript returns the served copy of a record: the reload script
// before </body>, and the record's Content-Security-Policy widened to allow
// that one script (by its hash) and fetches from this server, nothing else.
func withReloadScript(page []byte, version int) []byte {
	script := fmt.Sprintf(reloadScript, version)
	sum := sha256.Sum256([]byte(script))
	allow := fmt.Sprintf("%s script-src 'sha256-%s'; connect-src 'self';", cspNone, base64.StdEncoding.EncodeToString(sum[:]))
	page = bytes.Replace(page, []byte(cspNone), []byte(allow), 1)
	tag := "<script>" + script + "</script>"
	i := bytes.LastIndex(page, []byte("</body>"))
	if i < 0 {
		return append(page, tag...)
	}
	out := make([]byte, 0, len(page)+len(tag))
	out = append(out, page[:i]...)
	out = append(out, tag...)
	return append(out, page[i:]...)
}
