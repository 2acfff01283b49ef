package runtime

import (
	"context"
	"fmt"

	starlarkjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/limits"
)

// Starlark's str, repr and print and lib/json's encode and decode recurse
// in Go through a value or a JSON text with no bound, and a Go builtin
// cannot be cancelled: json.decode of a text nested 3 million deep
// overflowed Go's stack (a crash with no position), and str() of a list
// nested 200,000 deep ran for 34 s deaf to SIGTERM (Starlark's printer
// looks for cycles along the path, so its time is quadratic in the
// depth). The engine's versions refuse, before recursing, what is nested
// deeper than limits.Depth or larger than limits.Value, naming the
// builtin, the limit and its variable; the error carries the notebook's
// file:line:col as every builtin error does.

// guardedUniversal are the universe's str, repr and print, checked.
var guardedUniversal = starlark.StringDict{
	"str":   guard("str", starlark.Universe["str"].(*starlark.Builtin), checkArgsShowable),
	"repr":  guard("repr", starlark.Universe["repr"].(*starlark.Builtin), checkArgsShowable),
	"print": guard("print", starlark.Universe["print"].(*starlark.Builtin), checkArgsShowable),
}

// jsonModule is lib/json with its recursions bounded.
var jsonModule = &starlarkstruct.Module{
	Name: "json",
	Members: starlark.StringDict{
		"encode":        guard("json.encode", jsonMember("encode"), checkArgsShowable),
		"encode_indent": guard("json.encode_indent", jsonMember("encode_indent"), checkArgsShowable),
		"decode":        guard("json.decode", jsonMember("decode"), checkJSONDepth),
		"indent":        jsonMember("indent"), // encoding/json's scanner: bounded, not recursive
	},
}

func jsonMember(name string) *starlark.Builtin {
	return starlarkjson.Module.Members[name].(*starlark.Builtin)
}

// guard returns inner under its own name, called only once check passes.
func guard(name string, inner *starlark.Builtin, check func(context.Context, starlark.Tuple, []starlark.Tuple) error) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := check(Context(t), args, kwargs); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return inner.CallInternal(t, args, kwargs)
	})
}

func checkArgsShowable(ctx context.Context, args starlark.Tuple, _ []starlark.Tuple) error {
	for _, a := range args {
		if err := checkShowable(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// checkShowable walks v as Starlark's printer does, without recursion:
// a container already on the path is skipped (the printer writes "[...]"
// for a cycle), a value shared twice is walked twice (the printer writes it
// twice). It fails past limits.Depth levels, or past limits.Value values
// (each is at least a byte of output: a list that doubles by sharing 100
// times is 2^100 of them), or when ctx ends.
func checkShowable(ctx context.Context, v starlark.Value) error {
	if _, children := shape(v); len(children) == 0 {
		return nil
	}
	maxDepth, maxSize := limits.Depth.Get(), limits.Value.Get()
	type frame struct {
		self     starlark.Value
		children []starlark.Value
	}
	onPath := map[starlark.Value]bool{}
	_, children := shape(v)
	stack := []frame{{v, children}}
	markPath(onPath, v, true)
	var visited int64
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.children) == 0 {
			markPath(onPath, top.self, false)
			stack = stack[:len(stack)-1]
			continue
		}
		c := top.children[0]
		top.children = top.children[1:]
		if visited++; visited > maxSize {
			return fmt.Errorf("%w: more than %d values to show (%s)", limits.ErrTooLarge, maxSize, limits.Value.Hint())
		}
		if visited%(1<<16) == 0 && ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", ctx.Err())
		}
		if pathKey(c) && onPath[c] {
			continue // a cycle: the printer writes "[...]"
		}
		_, cc := shape(c)
		if len(cc) == 0 {
			continue
		}
		if int64(len(stack)) > maxDepth {
			return fmt.Errorf("%w: more than %d levels (%s)", limits.ErrTooDeep, maxDepth, limits.Depth.Hint())
		}
		markPath(onPath, c, true)
		stack = append(stack, frame{c, cc})
	}
	return nil
}

// pathKey says whether v can be a map key standing for its identity: the
// mutable containers, the only values through which a cycle can pass.
func pathKey(v starlark.Value) bool {
	switch v.(type) {
	case *starlark.List, *starlark.Dict, *starlark.Set, *starlarkstruct.Struct:
		return true
	}
	return false
}

func markPath(onPath map[starlark.Value]bool, v starlark.Value, on bool) {
	if !pathKey(v) {
		return
	}
	if on {
		onPath[v] = true
	} else {
		delete(onPath, v)
	}
}

// checkJSONDepth scans json.decode's text for its nesting, outside string
// literals, before lib/json's recursive decoder sees it.
func checkJSONDepth(_ context.Context, args starlark.Tuple, kwargs []starlark.Tuple) error {
	var text starlark.Value
	if len(args) > 0 {
		text = args[0]
	}
	for _, kv := range kwargs {
		if k, _ := starlark.AsString(kv[0]); k == "x" {
			text = kv[1]
		}
	}
	s, ok := starlark.AsString(text)
	if !ok {
		return nil // lib/json names the wrong type
	}
	return JSONDepth(s, limits.Depth.Get())
}

// JSONDepth fails when the JSON text s opens more than max arrays or
// objects inside one another, naming the line and column where it does.
// It reads s once, without recursion, and judges nothing else of it.
func JSONDepth(s string, max int64) error {
	var depth int64
	inString, escaped := false, false
	line, col := 1, 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		col++
		if ch == '\n' {
			line, col = line+1, 0
		}
		switch {
		case inString && escaped:
			escaped = false
		case inString && ch == '\\':
			escaped = true
		case inString:
			inString = ch != '"'
		case ch == '"':
			inString = true
		case ch == '[' || ch == '{':
			if depth++; depth > max {
				return fmt.Errorf("%w: JSON nested more than %d levels at line %d, column %d of the text (%s)", limits.ErrTooDeep, max, line, col, limits.Depth.Hint())
			}
		case ch == ']' || ch == '}':
			depth--
		}
	}
	return nil
}
