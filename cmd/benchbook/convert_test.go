package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/ipynb"
)

// benchbook convert takes the quickstart to .ipynb and back unchanged, and
// never replaces an existing file (whose outputs would be lost) unless told.
func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	star, src := copyQuickstart(t, dir)
	if code, _, stderr := runCLI(t, "convert", star); code != 0 {
		t.Fatalf("convert to ipynb: exit %d\n%s", code, stderr)
	}
	nb := filepath.Join(dir, "quickstart.ipynb")
	back := filepath.Join(dir, "back.star")
	if code, _, stderr := runCLI(t, "convert", "-to", "star", "-o", back, nb); code != 0 {
		t.Fatalf("convert to star: exit %d\n%s", code, stderr)
	}
	got, _ := os.ReadFile(back)
	if string(got) != string(src) {
		t.Fatalf("the round trip changed the quickstart:\n%s", got)
	}
	code, _, stderr := runCLI(t, "convert", star)
	if code != 1 || !strings.Contains(stderr, "exists") {
		t.Fatalf("converting over an existing ipynb: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "convert", "-force", star); code != 0 {
		t.Fatalf("-force: exit %d\n%s", code, stderr)
	}
	if code, _, _ := runCLI(t, "convert", "-to", "pdf", star); code != 2 {
		t.Fatalf("-to pdf: exit %d, want the usage error's 2", code)
	}
}

// copyQuickstart copies notebooks/quickstart.star into dir.
func copyQuickstart(t *testing.T, dir string) (path string, src []byte) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "notebooks", "quickstart.star"))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "quickstart.star")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, src
}

// A notebook made in JupyterLab, its cells unnamed, run by the kernel
// (which names them by the cell ids JupyterLab sends) and saved: converted
// to .star, its cells carry those ids as names, so benchbook run finds
// every cell a hit under the name the kernel cached it under, and
// converted back, the ids are the ones JupyterLab gave.
func TestConvertKeepsTheKernelsNames(t *testing.T) {
	dir := t.TempDir()
	env := append(installKernel(t), "JPY_SESSION_NAME="+filepath.Join(dir, "study.ipynb"))
	ids := []string{"5e0b9c1a-2f4d-4c8e-9a7b-1d2e3f4a5b6c", "0d9f8e7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f"}
	steps := []step{
		{Code: "x = 40", Cell: ids[0], line: "ran"},
		{Code: "y = x + 2\ny", Cell: ids[1], line: "ran", result: "42"},
	}
	got := playSession(t, env, dir, steps)
	checkSteps(t, steps, got)
	nb := &ipynb.Notebook{Metadata: ipynb.KernelMetadata(), NBFormat: 4, NBFormatMinor: 5}
	for i, s := range steps { // as JupyterLab saves it: the outputs the kernel sent
		outs := []any{map[string]any{"output_type": "display_data", "data": map[string]any{"text/plain": "status"},
			"metadata": map[string]any{"benchbook": map[string]any{"cell": got[i].StatusLine.Cell, "status": got[i].StatusLine.Status}}}}
		count := json.RawMessage(fmt.Sprint(i + 1))
		nb.Cells = append(nb.Cells, ipynb.Cell{CellType: "code", ID: ids[i], Source: ipynb.Source(s.Code), Metadata: map[string]any{}, Outputs: &outs, ExecutionCount: &count})
	}
	data, err := ipynb.Marshal(nb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "study.ipynb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "convert", filepath.Join(dir, "study.ipynb")); code != 0 {
		t.Fatalf("convert to star: %s", stderr)
	}
	star := filepath.Join(dir, "study.star")
	code, _, stderr := runCLI(t, "run", "-no-color", star)
	if code != 0 {
		t.Fatalf("benchbook run: exit %d\n%s", code, stderr)
	}
	for _, id := range ids {
		if !progressSays(stderr, id, "hit") {
			t.Errorf("benchbook run of the converted notebook: no hit named %s\n%s", id, stderr)
		}
	}
	back := filepath.Join(dir, "back.ipynb")
	if code, _, stderr := runCLI(t, "convert", "-o", back, star); code != 0 {
		t.Fatalf("convert back: %s", stderr)
	}
	b, _ := os.ReadFile(back)
	again, err := ipynb.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, c := range again.Cells {
		gotIDs = append(gotIDs, c.ID)
	}
	if !reflect.DeepEqual(gotIDs, ids) {
		t.Errorf("ids after .ipynb -> .star -> .ipynb: %q, want %q", gotIDs, ids)
	}
}
