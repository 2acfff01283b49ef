package runtime

import (
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime/redact"
)

// secretLiterals finds the string literals a cell's source puts under a
// secret name, so the redactor knows them before anything is shown: the
// value of a dict entry, a keyword argument or an assignment whose name
// says secret ({"auth": ("u", "PW")}, headers = {"X-Api-Key": "K"},
// password = "PW"), and the default of a parameter whose name does
// (param("db_password", "PW"), which no -p hides when left at its
// default). Free-text redaction sees only name=value shapes; these reached
// the records and the cache.
func secretLiterals(f *syntax.File) []string {
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DictEntry:
			if lit, ok := n.Key.(*syntax.Literal); ok && lit.Token == syntax.STRING && redact.SecretName(lit.Value.(string)) {
				out = append(out, secretStrings(n.Value)...)
			}
		case *syntax.BinaryExpr: // a keyword argument
			if id, ok := n.X.(*syntax.Ident); ok && n.Op == syntax.EQ && redact.SecretName(id.Name) {
				out = append(out, secretStrings(n.Y)...)
			}
		case *syntax.AssignStmt:
			if id, ok := n.LHS.(*syntax.Ident); ok && redact.SecretName(id.Name) {
				out = append(out, secretStrings(n.RHS)...)
			}
		case *syntax.CallExpr:
			if name := paramName(n); name != "" && redact.SecretName(name) {
				out = append(out, paramDefault(n)...)
			}
		}
		return true
	})
	return out
}

// secretStrings are the strings a value expression is made of: a literal,
// the elements of a tuple, list or dict, a parameter's default. Not the
// arguments of other calls (os.getenv("PGPASS") names no secret) nor the
// parts of a concatenation ("Bearer " + t: "Bearer " is none).
func secretStrings(x syntax.Expr) []string {
	switch x := x.(type) {
	case *syntax.Literal:
		if x.Token == syntax.STRING {
			return []string{x.Value.(string)}
		}
	case *syntax.ParenExpr:
		return secretStrings(x.X)
	case *syntax.TupleExpr:
		return secretList(x.List)
	case *syntax.ListExpr:
		return secretList(x.List)
	case *syntax.DictExpr:
		var out []string
		for _, e := range x.List {
			out = append(out, secretStrings(e.(*syntax.DictEntry).Value)...)
		}
		return out
	case *syntax.CallExpr:
		if paramName(x) != "" {
			return paramDefault(x)
		}
	}
	return nil
}

func secretList(xs []syntax.Expr) []string {
	var out []string
	for _, x := range xs {
		out = append(out, secretStrings(x)...)
	}
	return out
}

// paramDefault is what param(name, default) may return unset.
func paramDefault(call *syntax.CallExpr) []string {
	if d := defaultArg(call); d != nil {
		return secretStrings(d)
	}
	return nil
}

// defaultArg is the default argument of a param(name, default) call, nil
// when it has none.
func defaultArg(call *syntax.CallExpr) syntax.Expr {
	for i, a := range call.Args {
		if kw, ok := a.(*syntax.BinaryExpr); ok && kw.Op == syntax.EQ {
			if id, ok := kw.X.(*syntax.Ident); ok && id.Name == "default" {
				return kw.Y
			}
			continue
		}
		if i == 1 {
			return a
		}
	}
	return nil
}
