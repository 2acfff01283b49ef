package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// readme is the repository's README, which these tests keep true.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestREADMENamesEveryTemplate: the README's row for new listed http and
// postgres but not the container template (issue 33).
func TestREADMENamesEveryTemplate(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\| `new \\[-template ([^]]*)\\]").FindStringSubmatch(readme(t))
	if row == nil {
		t.Fatal("README: no row for new [-template ...]")
	}
	listed := strings.Split(strings.ReplaceAll(row[1], `\|`, "|"), "|")
	if strings.Join(listed, ",") != strings.Join(templateNames(), ",") {
		t.Errorf("README lists templates %q, new has %q", listed, templateNames())
	}
}

// TestREADMESaysHowToInstall: a new user who followed the README had no
// benchbook on PATH (issue 33).
func TestREADMESaysHowToInstall(t *testing.T) {
	if !strings.Contains(readme(t), "go install ./cmd/benchbook") {
		t.Error("README does not say how to put benchbook on PATH (go install ./cmd/benchbook)")
	}
}
