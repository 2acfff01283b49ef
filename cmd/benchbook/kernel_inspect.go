package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/jupyter"
	"github.com/benchbook/benchbook/runtime/redact"
)

// Complete answers with the REPL's completer (names, module members, the
// attributes of values at hand, :commands and cell names; never running a
// cell) on the line the cursor is in.
func (ks *kernelSession) Complete(code string, cursor int) jupyter.Completion {
	none := jupyter.Completion{CursorStart: cursor, CursorEnd: cursor}
	if !ks.waitReady(readyWait) {
		return none
	}
	runes := []rune(code)
	if cursor < 0 || cursor > len(runes) {
		return none
	}
	line := runes[:cursor]
	if i := lastIndexRune(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if len(line) > 0 && line[0] == '%' { // %cells spells :cells
		line = append([]rune{':'}, line[1:]...)
	}
	suffixes, n := ks.r.completer().Do(line, len(line))
	typed := string(line[len(line)-n:])
	if strings.HasPrefix(string(line), "%") {
		typed = strings.Replace(typed, ":", "%", 1)
	}
	c := jupyter.Completion{CursorStart: cursor - n, CursorEnd: cursor}
	for _, s := range suffixes {
		c.Matches = append(c.Matches, typed+string(s))
	}
	return c
}

func lastIndexRune(rs []rune, r rune) int {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i] == r {
			return i
		}
	}
	return -1
}

// Inspect describes the dotted name around the cursor: a builtin module's
// members, a function's signature and docstring, a value at hand (never
// computed for this) with its type, value, attributes and defining cell.
func (ks *kernelSession) Inspect(code string, cursor, detail int) jupyter.Inspection {
	if !ks.waitReady(readyWait) {
		return jupyter.Inspection{}
	}
	name := nameAt([]rune(code), cursor)
	if name == "" {
		return jupyter.Inspection{}
	}
	text, ok := ks.describe(name)
	if !ok {
		return jupyter.Inspection{}
	}
	return jupyter.Inspection{Found: true, Data: map[string]any{"text/plain": redact.String(text)}}
}

// nameAt is the identifier, with dots, that the cursor is in or just after.
func nameAt(code []rune, cursor int) string {
	if cursor > len(code) {
		cursor = len(code)
	}
	isName := func(r rune) bool {
		return r == '_' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	start, end := cursor, cursor
	for start > 0 && isName(code[start-1]) {
		start--
	}
	for end < len(code) && isName(code[end]) {
		end++
	}
	return strings.Trim(string(code[start:end]), ".")
}

// describe resolves a dotted name without running anything.
func (ks *kernelSession) describe(name string) (string, bool) {
	parts := strings.Split(name, ".")
	v, ok := completionValues()[parts[0]]
	where := "builtin"
	if !ok {
		v, ok = ks.r.e.Peek(parts[0])
		where = "global"
	}
	if !ok {
		if def := ks.r.e.Definer(parts[0]); def != "" {
			return fmt.Sprintf("%s: defined by cell %s, not computed yet (run the cell to inspect its value)", parts[0], def), true
		}
		return "", false
	}
	for _, attr := range parts[1:] {
		ha, isAttrs := v.(starlark.HasAttrs)
		if !isAttrs {
			return "", false
		}
		next, err := ha.Attr(attr)
		if err != nil || next == nil {
			return "", false
		}
		v = next
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", name, v.Type())
	if where == "global" && len(parts) == 1 {
		fmt.Fprintf(&b, ", defined by cell %s", ks.r.e.Definer(name))
	}
	b.WriteString("\n")
	switch fn := v.(type) {
	case *starlark.Function:
		fmt.Fprintf(&b, "%s(%s)\n", fn.Name(), signature(fn))
		if doc := fn.Doc(); doc != "" {
			b.WriteString("\n" + doc + "\n")
		} else if doc := stdlibDoc(fn); doc != "" {
			b.WriteString("\n" + doc)
		}
	case *starlark.Builtin:
		if doc := builtinDoc(fn.Name()); doc != "" && fn.Receiver() == nil { // a method's name is no builtin's
			b.WriteString(doc)
		} else {
			fmt.Fprintf(&b, "%s(...), a builtin\n", fn.Name())
		}
	default:
		b.WriteString(truncateText(displayText(v, false), 2000) + "\n")
	}
	if ha, ok := v.(starlark.HasAttrs); ok {
		if names := ha.AttrNames(); len(names) > 0 {
			fmt.Fprintf(&b, "\nattributes: %s\n", strings.Join(names, ", "))
		}
	}
	return b.String(), true
}

// builtinDoc is a builtin's entry in the reference (its signature,
// arguments, errors and example) as text, or "".
func builtinDoc(name string) string {
	ref, err := reference()
	if err != nil {
		return ""
	}
	if _, s := ref.entry(name); s != nil {
		return markdownForTerminal(s.Body, false)
	}
	return ""
}

// stdlibDoc is the reference page of the stdlib module that defines fn
// (abab is documented by @std/abab.star's docstring), or "".
func stdlibDoc(fn *starlark.Function) string {
	ref, err := reference()
	if err != nil {
		return ""
	}
	if p := ref.page(fn.Position().Filename()); p != nil && p.Entry(fn.Name()) != nil {
		return markdownForTerminal(p.Source, false)
	}
	return ""
}

func signature(fn *starlark.Function) string {
	var ps []string
	for i := 0; i < fn.NumParams(); i++ {
		p, _ := fn.Param(i)
		ps = append(ps, p)
	}
	return strings.Join(ps, ", ")
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// IsComplete says whether the console should run code or read another
// line, as the REPL decides: a statement that does not parse yet because
// the input ended is incomplete, an open block is incomplete until an
// empty line, any other parse error is invalid.
func (ks *kernelSession) IsComplete(code string) (string, string) {
	trimmed := strings.TrimSpace(code)
	if trimmed == "" || isCommand(trimmed) {
		return "complete", ""
	}
	f, err := replSyntax.Parse("<input>", code, 0)
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "got end of file") || strings.Contains(msg, "unexpected EOF") {
			return "incomplete", nextIndent(code)
		}
		return "invalid", ""
	}
	if n := len(f.Stmts); n > 0 && isBlock(f.Stmts[n-1]) && !endsBlank(code) {
		return "incomplete", nextIndent(code)
	}
	return "complete", ""
}

// endsBlank: the input's last line is empty, or holds only the indent a
// console put there, which ends an open block (as at IPython's prompt).
func endsBlank(code string) bool {
	i := strings.LastIndexByte(code, '\n')
	return i >= 0 && strings.TrimSpace(code[i+1:]) == ""
}

func isBlock(s syntax.Stmt) bool {
	switch s.(type) {
	case *syntax.DefStmt, *syntax.IfStmt, *syntax.ForStmt, *syntax.WhileStmt:
		return true
	}
	return false
}

// nextIndent is the indent of the next line: the last line's, one level
// deeper after a ':'.
func nextIndent(code string) string {
	lines := strings.Split(strings.TrimRight(code, "\n"), "\n")
	last := lines[len(lines)-1]
	indent := last[:len(last)-len(strings.TrimLeft(last, " \t"))]
	if strings.HasSuffix(strings.TrimSpace(last), ":") {
		indent += "    "
	}
	return indent
}

func (ks *kernelSession) isReady() bool {
	select {
	case <-ks.ready:
		return ks.r != nil
	default:
		return false
	}
}

// readyWait bounds how long a completion or an inspection waits for the
// engine to open (the notebook parsed, the cache's lock taken): a request
// sent right after the kernel started is answered, not found empty, while
// one behind another run's lock does not hold the shell channel for long.
const readyWait = 5 * time.Second

// waitReady waits up to d for the engine; it reports whether it is open.
func (ks *kernelSession) waitReady(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ks.ready:
	case <-t.C:
	}
	return ks.isReady()
}

// Evaluate answers one of an execute_request's user_expressions as REPL
// input is evaluated (a value from the cache, or computed as the REPL
// would), refusing statements: a frontend's query defines no name.
func (ks *kernelSession) Evaluate(ctx context.Context, expr string) (map[string]any, *jupyter.Error) {
	if !ks.waitReady(readyWait) {
		return nil, &jupyter.Error{Name: "NotReady", Value: "the notebook's engine is not open yet", Traceback: []string{}}
	}
	if _, err := syntax.ParseExpr("<user_expression>", expr, 0); err != nil {
		msg := redact.String(fmt.Sprintf("not an expression: %v", err))
		return nil, &jupyter.Error{Name: "SyntaxError", Value: msg, Traceback: []string{msg}}
	}
	r := ks.r
	r.e.SetContext(ctx)
	outs, err := r.e.Eval(expr)
	r.e.SetContext(ks.base)
	if err != nil {
		f := ks.failure(err, "")
		return nil, f
	}
	var v starlark.Value = starlark.None
	for _, out := range outs {
		if _, printed := out.(runtime.Printed); !printed && out != nil {
			v = out
		}
	}
	return redactBundle(jupyter.Bundle(v)), nil
}
