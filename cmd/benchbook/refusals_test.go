package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unbalanced returns the first paragraph of s (lines up to a blank one: a
// usage text wraps its sentences) whose parentheses do not close, or
// close one that was never opened; "" when every one is balanced.
func unbalanced(s string) string {
	for _, line := range strings.Split(s, "\n\n") {
		depth := 0
		for _, r := range line {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth < 0 {
				break
			}
		}
		if depth != 0 {
			return line
		}
	}
	return ""
}

// Every refusal the command line makes says all of what it means to say:
// the text that reaches the user (through the redaction of stderr, which
// read "password=...)" as a password and hid the parenthesis closing it)
// closes every parenthesis it opens.
func TestCLIRefusalsCloseTheirParentheses(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.star")
	baselineNB(t, nb, "120, 121, 119, 120")
	base := filepath.Join(dir, "base.json")
	if code, _, stderr := runCLI(t, "run", "-p", "clients=16", "-format", "json", "-o", base, nb); code != 0 {
		t.Fatalf("baseline run: %d\n%s", code, stderr)
	}
	data, _ := os.ReadFile(base)
	otherHost := filepath.Join(dir, "other.json")
	os.WriteFile(otherHost, bytes.Replace(data, []byte(`"cores": `), []byte(`"cores": 9`), 1), 0o644)
	small := filepath.Join(dir, "small.star")
	os.WriteFile(small, []byte("# %% a\nx = 1\n"), 0o644)
	if code, _, stderr := runCLI(t, "convert", small); code != 0 {
		t.Fatalf("convert: %d\n%s", code, stderr)
	}
	prefix := t.TempDir()
	for _, args := range [][]string{
		{"kernel", "install", "--prefix", prefix, "-p", "password=hunter2"},
		{"kernel", "install", "--prefix", prefix, "-p", "api_token=abc"},
		{"kernel", "install", "--prefix", prefix, "-name", "a b"},
		{"kernel", "install", "--prefix", prefix, "extra"},
		{"kernel"},
		{"kernel", "-f", "a", "b"},
		{"convert", small},
		{"convert", "-to", "xx", small},
		{"run", "-p", "clients=8", "-baseline", base, nb},
		{"run", "-p", "clients=16", "-baseline", otherHost, nb},
		{"run", "-p", "clients=16", "-baseline", filepath.Join(dir, "missing.json"), nb},
		{"run", nb, "-rerun", "nope"},
		{"run", nb, "-p", "novalue"},
		{"run", "/dev/zero"},
		{"frobnicate"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code == 0 {
			t.Errorf("%q was not refused:\n%s", args, stderr)
		}
		if line := unbalanced(stderr); line != "" {
			t.Errorf("%q: a parenthesis does not close in %q", args, line)
		}
	}
}

// The kernel's refusals of a cell or a command close their parentheses
// too, as the frontend shows them.
func TestKernelRefusalsCloseTheirParentheses(t *testing.T) {
	env := installKernel(t)
	steps := []step{
		{Code: "x = 1", Cell: "c1", line: "ran"},
		{Code: "# %% a\ny = 1\n# %% b\nz = 2", Cell: "c2", status: "error", err: "starts another cell"},
		{Code: "w = 1", Cell: "bad id", status: "error", err: "cannot name a cell"},
		{Code: "# %% c1\nv = 1", Cell: "c3", status: "error", err: "already used"},
		{Code: ":frobnicate", status: "error", err: "unknown command"},
		{Code: ":params novalue", status: "error"},
		{Code: ":show nope", status: "error"},
		{Code: "x = 2", Cell: "c4", status: "error", err: "x"},
	}
	got := playSession(t, env, t.TempDir(), steps)
	checkSteps(t, steps, got)
	for i, g := range got {
		for _, text := range []string{g.Error, g.Stdout, g.Stderr} {
			if line := unbalanced(text); line != "" {
				t.Errorf("step %d (%q): a parenthesis does not close in %q", i, steps[i].Code, line)
			}
		}
	}
}
