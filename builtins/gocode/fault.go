package gocode

import (
	"errors"
	"fmt"
	"go/scanner"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/traefik/yaegi/interp"
)

// Error is a fault of interpreted Go code: a compile error, an unsupported
// construct, a panic. Its message starts with file:line so the user can go
// straight to the line; Hint says what to write instead when it is known.
type Error struct {
	File string // the source as the notebook named it, e.g. "gen.go"
	Line int    // 0 when unknown
	Col  int    // 0 when unknown
	Func string // the Go function that panicked; "" while loading
	Msg  string
	Hint string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Func != "" {
		b.WriteString("in " + e.Func + ": ")
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// posPrefix matches the "file.go:line:col: " or "line:col: " that yaegi puts
// in front of its compile errors.
var posPrefix = regexp.MustCompile(`^(?:[^\s:]*\.go:)?(\d+):(\d+): `)

// compileFault turns an error of yaegi's compiler into an Error at the
// user's line; it knows a few messages that mean an unsupported feature.
func compileFault(src *source, err error) *Error {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return &Error{File: src.name, Line: list[0].Pos.Line, Col: list[0].Pos.Column, Msg: list[0].Msg}
	}
	msg := err.Error()
	e := &Error{File: src.name, Msg: msg}
	if m := posPrefix.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Col, _ = strconv.Atoi(m[2])
		e.Msg = msg[len(m[0]):]
	}
	if e.Line > src.lines {
		// The position is inside a standard library package that yaegi
		// compiled from source (maps.Clone): not the user's line.
		e.Line, e.Col = 0, 0
	}
	e.Hint = compileHint(e.Msg)
	return e
}

var importError = regexp.MustCompile(`^import "([^"]+)" error`)

func compileHint(msg string) string {
	if m := importError.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("package %s is not available to the interpreter (os/exec, unsafe and cgo never are)", m[1])
	}
	if strings.HasPrefix(msg, "undefined selector: ") {
		return "the interpreter's standard library stops at Go 1.22 and has no generic functions"
	}
	return ""
}

// panicLine matches the trace line yaegi writes to its stderr for every
// interpreted frame a panic unwinds, innermost first: "10:23: panic: gen.F(...)".
var panicLine = regexp.MustCompile(`(?m)^(\d+):(\d+): panic: `)

// panicFault describes a panic recovered from interpreted code; trace is
// what yaegi wrote to its stderr while unwinding.
func panicFault(src *source, fn string, r any, trace string) *Error {
	if p, ok := r.(interp.Panic); ok {
		r = p.Value
	}
	if v, ok := r.(reflect.Value); ok && v.IsValid() && v.CanInterface() {
		r = v.Interface()
	}
	e := &Error{File: src.name, Func: fn, Msg: fmt.Sprintf("panic: %v", r)}
	if m := panicLine.FindStringSubmatch(trace); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Col, _ = strconv.Atoi(m[2])
	}
	if e.Line > src.lines {
		e.Line, e.Col = 0, 0
	}
	return e
}

// traceLog keeps the last lines yaegi writes to its stderr: the frames a
// panic went through. A fault takes them (and clears the log).
type traceLog struct {
	mu    sync.Mutex
	lines []string
	part  string
}

const maxTraceLines = 64

func (l *traceLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	text := l.part + string(p)
	lines := strings.Split(text, "\n")
	l.part = lines[len(lines)-1]
	l.lines = append(l.lines, lines[:len(lines)-1]...)
	if n := len(l.lines); n > maxTraceLines {
		l.lines = append(l.lines[:0], l.lines[n-maxTraceLines:]...)
	}
	return len(p), nil
}

func (l *traceLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.Join(l.lines, "\n")
	l.lines, l.part = nil, ""
	return s
}
