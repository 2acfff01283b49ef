package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed templates/*.star
var templates embed.FS

func cmdNew(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	names := templateNames()
	flags := newFlagSet("new", "Writes a new investigation notebook from a template: a hypothesis to fill in,\nparameters, targets, ABAB runs, comparisons, charts and a verdict. It runs as\nwritten (the http and capacity templates against the embedded demo, the\npostgres one on a throwaway cluster; the container one needs your two images\non the engine); then point it at your own system. capacity compares the\nsimulated users each arm carries at an SLO (p99 <= 50 ms).\n\nTemplates: "+strings.Join(names, ", "))
	tmpl := flags.String("template", "http", "the template: "+strings.Join(names, " or "))
	path, err := parseArgs(flags, args, stderr)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(path, ".star") {
		return usageError{fmt.Sprintf("notebook %q: the name must end in .star", path)}
	}
	src, err := templates.ReadFile("templates/" + *tmpl + ".star")
	if err != nil {
		return usageError{fmt.Sprintf("-template %q: no such template (have %s)", *tmpl, strings.Join(names, ", "))}
	}
	title := strings.NewReplacer("-", " ", "_", " ").Replace(strings.TrimSuffix(filepath.Base(path), ".star"))
	text := strings.NewReplacer("{{TITLE}}", title, "{{FILE}}", path).Replace(string(src))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; not overwriting it", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (template %s); next: edit its hypothesis, then\n  benchbook run %s\n", path, *tmpl, path)
	return nil
}

func templateNames() []string {
	entries, _ := templates.ReadDir("templates")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".star"))
	}
	sort.Strings(names)
	return names
}
