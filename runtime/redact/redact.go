// Package redact hides secrets in everything benchbook lets out of the
// process. That means records (HTML, Markdown, JSON), stderr, file names and
// the cache's files. It is the one redaction pass; every such boundary calls
// it.
//
// What counts as a secret:
//   - the password in a URL's userinfo, any scheme (postgres://u:PW@host,
//     https://u:PW@host); the last '@' before the host ends the userinfo, so
//     a password may hold '@' and ':'. An http(s) userinfo with no password
//     (https://TOKEN@host) is hidden whole;
//   - the value after a secret-looking name in key/value text
//     (password=PW, password = 'P W', "token": "PW", PGPASSWORD=PW), and
//     SQL's PASSWORD 'PW';
//   - in structured values (dict entries, struct fields, table columns,
//     parameters) the value of any field whose name says secret;
//   - any text the process learned is a secret (Learn): the value of a
//     parameter named token, the password of a DSN given with -p, wherever
//     it turns up later, even alone.
package redact

import (
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/limits"
)

// Mask replaces a secret. It is net/url's choice (URL.Redacted), so a
// redacted DSN still parses.
const Mask = "xxxxx"

var (
	// userinfo: scheme, then everything up to the last '@' before the
	// first character that ends an authority ('/', '?', '#'), whitespace or
	// a quote (a URL inside a quoted string).
	urlUserinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)([^\s'"/?#<>]*)@`)

	// secretKV: a name that says secret, optionally quoted (a dict's
	// "password": ...), '=' or ':', then a quoted or bare value. A bare
	// value runs to whitespace, as in libpq's keyword form, or '&' (a
	// URL's query).
	// sqlPassword: CREATE/ALTER ROLE ... PASSWORD 'pw' (a workload.sql
	// label, a server's error echoing the statement).
	sqlPassword = regexp.MustCompile(`(?i)(\bpassword\s+)'(?:[^']|'')*'`)

	secretKV = regexp.MustCompile(`(?i)(["']?[\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth|credential|cookie)[\w.-]*["']?\s*[=:]\s*)("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s'"&]+)`)

	// oldWords are the names secretKV hid whatever else they hold
	// (tokenizer=...); the words added since (auth, credential, cookie)
	// hide a value only when the whole name says secret (SecretName), so
	// author = "Ann" and oauth_callback stay.
	oldWords = regexp.MustCompile(`(?i)password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key`)

	// headerKV: an HTTP header that carries credentials, written as a
	// header ("Authorization: Bearer T", curl -H 'Cookie: a=b; c=d'): its
	// value runs to the end of the line or a quote, spaces included.
	headerKV = regexp.MustCompile(`(?i)(\b(?:proxy-)?authorization|\bset-cookie|\bcookie)(\s*:[ \t]*)([^\r\n"']*[^\s"'])`)
)

// String hides every secret found in free text.
func String(s string) string {
	s = hideLearned(s)
	if !strings.ContainsAny(s, "@=:'") {
		return s // the common case, cheap: nothing that could hold a secret
	}
	if may(s, urlWords) {
		s = urlUserinfo.ReplaceAllStringFunc(s, maskUserinfo)
	}
	if may(s, sqlWords) {
		s = sqlPassword.ReplaceAllString(s, "${1}'"+Mask+"'")
	}
	if may(s, headerWords) {
		s = headerKV.ReplaceAllStringFunc(s, maskHeader)
	}
	if may(s, kvWords) {
		s = secretKV.ReplaceAllStringFunc(s, maskValue)
	}
	return s
}

// The words without one of which a pattern cannot match (lower case): on
// ASCII text a pattern runs only where its words are, since most text (a
// cell's source, every cell of every record) has none and the patterns'
// backtracking was 10-15 % of a 3,000-cell rerun (issue 38). Text with
// other characters runs every pattern: (?i) folds ſ to s and K to k.
var (
	urlWords    = []string{"://"}
	sqlWords    = []string{"password"}
	headerWords = []string{"authorization", "cookie"}
	kvWords     = []string{"passw", "pwd", "secret", "token", "key", "auth", "credential", "cookie"}
)

// may reports whether s, lower-cased, holds one of words, or is not ASCII.
func may(s string, words []string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	lower := strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// HasSQLPassword reports whether SQL text holds a PASSWORD 'literal'
// (CREATE ROLE, ALTER ROLE): a server that keeps statement texts
// (pg_stat_statements, its log) would keep the password.
func HasSQLPassword(sql string) bool { return sqlPassword.MatchString(sql) }

// minLearned is the shortest secret Learn keeps: masking every "42" of a
// record would hide the measurements, not a password.
const minLearned = 4

// learned holds the secrets this process was given. They are per process,
// not per run, because so is every output they must stay out of (stderr).
var learned struct {
	sync.RWMutex
	set map[string]bool
	r   *strings.Replacer
}

// Learn remembers the secrets in a named value (a parameter, a cell's
// source) so that String hides them wherever they turn up, even alone (a
// cell that splits a DSN and shows its password): the whole value when the
// name says secret, else the passwords found in it.
func Learn(name, value string) {
	var found []string
	if SecretName(name) {
		found = append(found, secretParts(value)...)
	}
	if !may(value, urlWords) && !may(value, kvWords) {
		learn(found)
		return
	}
	for _, m := range urlUserinfo.FindAllStringSubmatch(value, -1) {
		if _, pw, ok := strings.Cut(m[2], ":"); ok {
			found = append(found, pw)
		}
	}
	for _, m := range secretKV.FindAllStringSubmatch(value, -1) {
		if maskValue(m[0]) == m[0] {
			continue // a name the words matched but that says no secret (author)
		}
		v := m[2]
		if strings.ContainsAny(v[:1], `"'`) {
			found = append(found, secretParts(v[1:len(v)-1])...)
		} else if !strings.ContainsAny(v, "()[]{},") { // not code: password = param("pw", "")
			found = append(found, v)
		}
	}
	learn(found)
}

// LearnValue remembers v as a secret (a literal under a secret name in a
// cell's source, a password-named parameter's default), with the parts
// that may turn up alone.
func LearnValue(v string) { learn(secretParts(v)) }

// secretParts is a secret and what of it may be shown apart: the
// credentials after an HTTP auth scheme ("Bearer T": T) and each value of
// a cookie header ("a=b; c=d": b and d).
func secretParts(v string) []string {
	out := []string{v}
	if scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok && isWord(scheme) {
		out = append(out, strings.TrimSpace(cred))
	}
	if strings.Contains(v, "=") {
		for _, kv := range strings.Split(v, ";") {
			if _, val, ok := strings.Cut(kv, "="); ok {
				out = append(out, strings.TrimSpace(val))
			}
		}
	}
	return out
}

func isWord(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return s != ""
}

// placeholders are never learned: they hide nothing (token = "none"), and
// masking every "none" of a record would hide its data.
var placeholders = map[string]bool{"none": true, "null": true, "nil": true, "unset": true, "empty": true, "default": true}

func learn(found []string) {
	learned.Lock()
	defer learned.Unlock()
	added := false
	for _, s := range found {
		if len(s) >= minLearned && s != Mask && !placeholders[strings.ToLower(s)] && !learned.set[s] {
			if learned.set == nil {
				learned.set = map[string]bool{}
			}
			learned.set[s], added = true, true
		}
	}
	if added {
		learned.r = newReplacer(learned.set)
	}
}

// newReplacer replaces the longest secrets first, so that one holding
// another is masked whole.
func newReplacer(set map[string]bool) *strings.Replacer {
	all := make([]string, 0, len(set))
	for s := range set {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	pairs := make([]string, 0, 2*len(all))
	for _, s := range all {
		pairs = append(pairs, s, Mask)
	}
	return strings.NewReplacer(pairs...)
}

func hideLearned(s string) string {
	learned.RLock()
	r := learned.r
	learned.RUnlock()
	if r == nil {
		return s
	}
	return r.Replace(s)
}

func maskUserinfo(m string) string {
	sub := urlUserinfo.FindStringSubmatch(m)
	scheme, info := sub[1], sub[2]
	if user, _, ok := strings.Cut(info, ":"); ok {
		return scheme + user + ":" + Mask + "@"
	}
	switch strings.ToLower(scheme) {
	case "http://", "https://", "ws://", "wss://":
		return scheme + Mask + "@" // a bare token as the user name
	}
	return m // a user name alone (postgres://postgres@host) is no secret
}

// codeValue is a bare value that is code, not a secret: a call
// (token = param("token", "")) or a constant ("password": None}).
var codeValue = regexp.MustCompile(`^(?:[A-Za-z_][\w.]*\(|(?:None|True|False|null|true|false)(?:[^\w]|$))`)

func maskHeader(m string) string {
	sub := headerKV.FindStringSubmatch(m)
	if sub[3] == Mask {
		return m
	}
	return sub[1] + sub[2] + Mask
}

func maskValue(m string) string {
	sub := secretKV.FindStringSubmatch(m)
	prefix, val := sub[1], sub[2]
	name := strings.Trim(strings.TrimRight(prefix, " \t=:"), `"'`)
	switch {
	case val == Mask, codeValue.MatchString(val):
		return m
	case !oldWords.MatchString(name) && !SecretName(name):
		return m
	case strings.HasPrefix(val, `"`):
		return prefix + `"` + Mask + `"`
	case strings.HasPrefix(val, `'`):
		return prefix + `'` + Mask + `'`
	}
	return prefix + Mask
}

// secretWords are the words of a field name that make its value a secret.
var secretWords = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "pass": true, "passphrase": true,
	"secret": true, "token": true, "key": true, "apikey": true, "credential": true,
	"credentials": true, "auth": true, "authorization": true, "cookie": true, "cookies": true,
}

// SecretName reports whether a field, column or parameter named name holds
// a secret: one of its words (split at '_', '-', '.', spaces and case
// changes) is password, secret, token, key and the like, or it contains
// "password" or "secret" anywhere (PGPASSWORD).
func SecretName(name string) bool {
	lower := strings.ToLower(name)
	if strings.Contains(lower, "password") || strings.Contains(lower, "secret") {
		return true
	}
	for _, w := range words(name) {
		if secretWords[w] {
			return true
		}
	}
	return false
}

// words splits "apiKey", "api_key" and "API-KEY" into lower-case words.
func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prev := rune(0)
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// Param is a parameter's value as it may be shown.
func Param(name, value string) string {
	if SecretName(name) {
		return Mask
	}
	return String(value)
}

// Params applies Param to every parameter.
func Params(p map[string]string) map[string]string {
	if p == nil {
		return nil
	}
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = Param(k, v)
	}
	return out
}

// Args redacts a command line: "-p name=value" (or -p=name=value) by the
// parameter's name, every other argument as free text.
func Args(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i > 0 && (args[i-1] == "-p" || args[i-1] == "--p"):
			out[i] = paramArg(a)
		case strings.HasPrefix(a, "-p=") || strings.HasPrefix(a, "--p="):
			flag, kv, _ := strings.Cut(a, "=")
			out[i] = flag + "=" + paramArg(kv)
		default:
			out[i] = String(a)
		}
	}
	return out
}

func paramArg(kv string) string {
	name, value, ok := strings.Cut(kv, "=")
	if !ok {
		return String(kv)
	}
	return name + "=" + Param(name, value)
}

// Redacter is a host value that holds text a record shows (a table's cells,
// a file's name and content): Redacted returns a copy with secrets hidden,
// using Value, String and SecretName, and whether there were any.
type Redacter interface {
	starlark.Value
	Redacted() (starlark.Value, bool)
}

// Value returns v with its secrets hidden, and whether it held any:
// strings as free text, dict entries and struct fields whose name says
// secret masked whole, host values through Redacter. v itself comes back
// when it holds none. A value that holds a secret must not be written to
// disk.
func Value(v starlark.Value) (starlark.Value, bool) { return walk(v, int(limits.Depth.Get())) }

// Field is Value for the value of a named field (a column, a dict key):
// masked whole when the name says secret (None stays None: there is
// nothing to hide).
func Field(name string, v starlark.Value) (starlark.Value, bool) {
	return field(starlark.String(name), v, int(limits.Depth.Get()))
}

// walk looks into v, at most left more levels down (the depth limit, read
// once per value rather than once per element).
func walk(v starlark.Value, left int) (starlark.Value, bool) {
	if left < 0 {
		// Too deep to look inside (or cyclic): it may hold a secret, so it
		// is masked whole and never written. It used to pass as clean past
		// depth 64, and a secret nested deeper reached the cache.
		return starlark.String(Mask), true
	}
	switch v := v.(type) {
	case starlark.String:
		s := String(string(v))
		return starlark.String(s), s != string(v)
	case *starlark.List:
		elems, changed := walkSeq(v, left)
		if !changed {
			return v, false
		}
		return starlark.NewList(elems), true
	case starlark.Tuple:
		elems, changed := walkSeq(v, left)
		if !changed {
			return v, false
		}
		return starlark.Tuple(elems), true
	case *starlark.Dict:
		return walkDict(v, left)
	case *starlark.Set:
		return walkSet(v, left)
	case *starlarkstruct.Struct:
		return walkStruct(v, left)
	case Redacter:
		return v.Redacted()
	}
	return v, false
}

func walkSeq(s starlark.Indexable, left int) ([]starlark.Value, bool) {
	elems := make([]starlark.Value, s.Len())
	changed := false
	for i := range elems {
		var c bool
		elems[i], c = walk(s.Index(i), left-1)
		changed = changed || c
	}
	return elems, changed
}

func walkDict(d *starlark.Dict, left int) (starlark.Value, bool) {
	out := starlark.NewDict(d.Len())
	changed := false
	for _, kv := range d.Items() {
		k, kc := walk(kv[0], left-1)
		val, vc := field(kv[0], kv[1], left)
		changed = changed || kc || vc
		if err := out.SetKey(k, val); err != nil {
			return d, false // an unhashable key cannot come from a dict; keep d
		}
	}
	if !changed {
		return d, false
	}
	return out, true
}

// field redacts the value of a named field: masked whole when the name
// says secret, else walked.
func field(name, v starlark.Value, left int) (starlark.Value, bool) {
	if s, ok := name.(starlark.String); ok && SecretName(string(s)) {
		if v == starlark.None || v == starlark.String(Mask) {
			return v, false
		}
		return starlark.String(Mask), true
	}
	return walk(v, left-1)
}

func walkSet(s *starlark.Set, left int) (starlark.Value, bool) {
	out := starlark.NewSet(s.Len())
	changed := false
	iter := s.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		y, c := walk(x, left-1)
		changed = changed || c
		if err := out.Insert(y); err != nil {
			return s, false
		}
	}
	if !changed {
		return s, false
	}
	return out, true
}

func walkStruct(s *starlarkstruct.Struct, left int) (starlark.Value, bool) {
	fields := starlark.StringDict{}
	changed := false
	for _, name := range s.AttrNames() {
		v, err := s.Attr(name)
		if err != nil {
			return s, false
		}
		var c bool
		fields[name], c = field(starlark.String(name), v, left)
		changed = changed || c
	}
	if !changed {
		return s, false
	}
	return starlarkstruct.FromStringDict(s.Constructor(), fields), true
}

// Writer redacts everything written through it as free text. A secret
// split across two writes would get through, so callers write whole lines
// (fmt.Fprintf does).
func Writer(w io.Writer) io.Writer {
	if rw, ok := w.(writer); ok {
		return rw
	}
	return writer{w}
}

type writer struct{ w io.Writer }

// Unwrap gives the writer underneath, for a terminal check.
func (r writer) Unwrap() io.Writer { return r.w }

func (r writer) Write(p []byte) (int, error) {
	s := String(string(p))
	if _, err := io.WriteString(r.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}
