package demotarget

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	goruntime "runtime"
	"strconv"
	"sync"
	"time"
)

// Options are the child's flags; backend.demo passes them from the
// notebook's options (Args).
type Options struct {
	Index bool   // a covering index on (token, score): the performance choice
	Cache bool   // an in-memory response cache
	Rows  int    // rows of items
	Data  string // directory of the database files
	Addr  string // listen address
}

// Args are o as the child's flags (its listen address left to the child).
func (o Options) Args() []string {
	return []string{"-index=" + strconv.FormatBool(o.Index), "-cache=" + strconv.FormatBool(o.Cache),
		"-rows=" + strconv.Itoa(o.Rows), "-data=" + o.Data}
}

func parseServe(args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("__demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.Index, "index", false, "create a covering index for the search")
	fs.BoolVar(&o.Cache, "cache", false, "cache responses in memory")
	fs.IntVar(&o.Rows, "rows", DefaultRows, "rows of items")
	fs.StringVar(&o.Data, "data", DataDir(), "database directory")
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:0", "listen address")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.Rows <= 0 || o.Rows > 10_000_000 {
		return o, fmt.Errorf("demo: -rows must be in 1..10000000, got %d", o.Rows)
	}
	return o, nil
}

// DefaultRows are the items of a demo started without rows = N.
const DefaultRows = 100_000

// Serve runs the demo server in this process (the child side): the
// benchbook binary in its hidden "__demo" mode (Mode). It prints
// "listening http://host:port" on stdout once it accepts requests, and
// returns when ctx is cancelled.
func Serve(ctx context.Context, args []string) error {
	o, err := parseServe(args, os.Stderr)
	if err != nil {
		return err
	}
	path := dbPath(o.Data, o.Rows, o.Index)
	if err := ensureDB(path, o.Rows, o.Index); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(2 * goruntime.GOMAXPROCS(0))
	db.SetMaxIdleConns(2 * goruntime.GOMAXPROCS(0))
	s, err := newSearcher(db, o.Cache)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return serveOn(ctx, ln, s)
}

func serveOn(ctx context.Context, ln net.Listener, s *searcher) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", s.search)
	mux.HandleFunc("GET /items/{id}", s.item)
	mux.HandleFunc("POST /items/{id}/like", s.like)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	fmt.Printf("listening http://%s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// searcher answers GET /search?q=token&limit=20 with the best-scored items
// carrying the token, as JSON; GET /items/ID with an item and its likes;
// POST /items/ID/like with one more like (a write: likes live in memory,
// so the database stays read-only and the same for every arm).
type searcher struct {
	stmt  *sql.Stmt
	byID  *sql.Stmt
	cache *sync.Map // key -> []byte, when caching

	mu    sync.Mutex
	likes map[int64]int64 // by item: bounded by the rows
}

type item struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
	Score int64  `json:"score"`
}

func newSearcher(db *sql.DB, cache bool) (*searcher, error) {
	stmt, err := db.Prepare("SELECT id, title, score FROM items WHERE token = ? ORDER BY score DESC LIMIT ?")
	if err != nil {
		return nil, fmt.Errorf("demo: prepare: %w", err)
	}
	byID, err := db.Prepare("SELECT id, title, score FROM items WHERE id = ?")
	if err != nil {
		return nil, fmt.Errorf("demo: prepare: %w", err)
	}
	s := &searcher{stmt: stmt, byID: byID, likes: map[int64]int64{}}
	if cache {
		s.cache = &sync.Map{}
	}
	return s, nil
}

func (s *searcher) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 || limit > 1000 {
		limit = 20
	}
	key := q + "\x00" + strconv.Itoa(limit)
	if s.cache != nil {
		if b, ok := s.cache.Load(key); ok {
			writeJSON(w, b.([]byte))
			return
		}
	}
	body, err := s.query(r.Context(), q, limit)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if s.cache != nil {
		s.cache.Store(key, body)
	}
	writeJSON(w, body)
}

func (s *searcher) query(ctx context.Context, q string, limit int) ([]byte, error) {
	rows, err := s.stmt.QueryContext(ctx, q, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	items := []item{}
	for rows.Next() {
		var it item
		if err := rows.Scan(&it.ID, &it.Title, &it.Score); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"q": q, "items": items})
}

func writeJSON(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// item answers GET /items/ID: the item and its likes, 404 for none.
func (s *searcher) item(w http.ResponseWriter, r *http.Request) {
	it, ok := s.lookup(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	likes := s.likes[it.ID]
	s.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"item": it, "likes": likes})
	writeJSON(w, body)
}

// like answers POST /items/ID/like: one more like for an item that exists.
func (s *searcher) like(w http.ResponseWriter, r *http.Request) {
	it, ok := s.lookup(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.likes[it.ID]++
	n := s.likes[it.ID]
	s.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"id": it.ID, "likes": n})
	writeJSON(w, body)
}

// lookup reads the item the request's path names; false, with the answer
// written (400 for a malformed id, 404 for none), when there is none.
func (s *searcher) lookup(w http.ResponseWriter, r *http.Request) (item, bool) {
	var it item
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "malformed id", http.StatusBadRequest)
		return it, false
	}
	switch err := s.byID.QueryRowContext(r.Context(), id).Scan(&it.ID, &it.Title, &it.Score); {
	case errors.Is(err, sql.ErrNoRows):
		http.NotFound(w, r)
		return it, false
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return it, false
	}
	return it, true
}
