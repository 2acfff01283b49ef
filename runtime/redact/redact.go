// Package redact hides secrets in everything benchbook lets out of the
// process. That means records (HTML, Markdown, JSON), stderr, file names,
// the kernel's messages and the cache's files. It is the one redaction
// pass; every such boundary calls it.
//
// What counts as a secret:
//   - the password in a URL's userinfo, any scheme (postgres://u:PW@host,
//     https://u:PW@host); the last '@' before the host ends the userinfo, so
//     a password may hold '@' and ':'. An http(s) userinfo with no password
//     (https://TOKEN@host) is hidden whole;
//   - the value after a secret-looking name in key/value text
//     (password=PW, password = 'P W', "token": "PW", PGPASSWORD=PW), an
//     Authorization or Cookie header's value, and SQL's PASSWORD 'PW' in
//     any quoting ($$PW$$, E'PW', U&'PW', $tag$PW$tag$; sql.go);
//   - the argument after a password flag (--requirepass PW, --password PW,
//     in a command line or an argv list), not the argument of -p (a port,
//     as often as not);
//   - in structured values (dict entries, struct fields, table columns,
//     parameters, ("Authorization", V) pairs) the value of any field whose
//     name says secret;
//   - any text the process learned is a secret: everything the above found,
//     the value of a parameter named token, the password of a DSN given
//     with -p, wherever it turns up later, even alone, encoded or sliced
//     (known.go).
package redact

import (
	"io"
	"regexp"
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

	// shellFlag: a flag and its argument in a command line
	// (server --requirepass PW); listFlag: the same in an argv list's repr
	// (["server", "--requirepass", "PW"]). FlagSecret says which flags.
	shellFlag = regexp.MustCompile(`(?i)((?:^|[\s(])--?([a-z][a-z0-9_.-]*)[ \t]+)('[^'\n]*'|"[^"\n]*"|[^\s'"]+)`)
	listFlag  = regexp.MustCompile(`(?i)(["']--?([a-z][a-z0-9_.-]*)["'][ \t]*,[ \t]*)("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')`)
)

// String hides every secret found in free text, and learns what the
// patterns found so that it stays hidden wherever it turns up later.
func String(s string) string {
	s = hideLearned(s)
	if !strings.ContainsAny(s, "@=:'$-") {
		return s // the common case, cheap: nothing that could hold a secret
	}
	f := finder{lower: foldString(s), ascii: isASCII(s)}
	if f.may(urlWords) {
		s = urlUserinfo.ReplaceAllStringFunc(s, f.maskUserinfo)
	}
	if f.may(sqlWords) {
		var found []string
		s, found = maskSQL(s)
		f.found = append(f.found, found...)
	}
	if f.may(headerWords) {
		s = headerKV.ReplaceAllStringFunc(s, f.maskHeader)
	}
	if f.may(kvWords) {
		s = secretKV.ReplaceAllStringFunc(s, f.maskValue)
	}
	if f.may(flagWords) && strings.Contains(s, "-") {
		s = listFlag.ReplaceAllStringFunc(s, func(m string) string { return f.maskFlag(listFlag, m, true) })
		s = shellFlag.ReplaceAllStringFunc(s, func(m string) string { return f.maskFlag(shellFlag, m, false) })
	}
	learn(f.found)
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
	flagWords   = []string{"pass", "pw", "secret", "token", "key", "auth", "cred", "bearer", "jwt"}
)

// finder is one String call: the text lower-cased once for the patterns'
// words, and the secrets the patterns found.
type finder struct {
	lower string
	ascii bool
	found []string
}

// may reports whether the text holds one of words, or is not ASCII.
func (f *finder) may(words []string) bool {
	if !f.ascii {
		return true
	}
	for _, w := range words {
		if strings.Contains(f.lower, w) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Scan learns the secrets in a named value (a global a cell defined, one
// of its outputs, a variable in scope): all of its strings when the name
// says secret, else what Value finds in it by field name and by pattern.
func Scan(name string, v starlark.Value) {
	if SecretName(name) {
		learnStrings(v, int(limits.Depth.Get()))
	}
	Value(v)
}

// Learn remembers the secrets in a named value (a parameter, a cell's
// source, a header, an environment variable) so that String hides them
// wherever they turn up, even alone (a cell that splits a DSN and shows its
// password): the whole value when the name says secret, and the secrets
// String finds in it.
func Learn(name, value string) {
	if SecretName(name) {
		learn(secretParts(value))
	}
	String(value)
}

// LearnValue remembers v as a secret (a literal under a secret name in a
// cell's source, a password-named parameter's default), with the parts
// that may turn up alone.
func LearnValue(v string) { learn(secretParts(v)) }

// LearnArgs remembers the arguments of a command line that are secrets:
// the one after a password flag (--requirepass PW) and the value of
// --password=PW, so that the process's display, its logs (a server that
// echoes its command line) and its errors hide them.
func LearnArgs(argv []string) {
	var found []string
	for i, a := range argv {
		if name, ok := flagName(a); ok && FlagSecret(name) {
			if k, v, eq := strings.Cut(a, "="); eq && FlagSecret(strings.TrimLeft(k, "-")) {
				found = append(found, v)
			} else if !eq && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				found = append(found, argv[i+1])
			}
		}
		String(a)
	}
	learn(found)
}

// flagName is a's name if it is a flag (-x, --name, --name=value).
func flagName(a string) (string, bool) {
	if !strings.HasPrefix(a, "-") || len(a) < 2 {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name, name != ""
}

// FlagSecret reports whether a command-line flag (its name without
// dashes) takes a secret (--password, --requirepass, --api-key, --token),
// not one whose value says where or how (--token-file, --auth-mode).
func FlagSecret(name string) bool {
	w := words(name)
	if len(w) == 0 || !SecretName(name) {
		return false
	}
	return !notSecretFlag[w[len(w)-1]]
}

var notSecretFlag = map[string]bool{"file": true, "path": true, "dir": true, "mode": true, "method": true,
	"type": true, "size": true, "length": true, "len": true, "count": true, "limit": true, "timeout": true,
	"name": true, "id": true, "url": true, "host": true, "port": true, "endpoint": true, "header": true,
	"env": true, "cmd": true, "command": true, "encryption": true, "hash": true, "algorithm": true,
	"format": true, "policy": true, "prompt": true, "stdin": true, "required": true, "ttl": true, "expiry": true}

// secretParts is a secret and what of it may be shown apart: the
// credentials after an HTTP auth scheme ("Bearer T": T) and each value of
// a cookie header ("a=b; c=d": b and d).
func secretParts(v string) []string {
	v = strings.TrimSpace(v)
	out := []string{v}
	if scheme, cred, ok := strings.Cut(v, " "); ok && isWord(scheme) {
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

func (f *finder) maskUserinfo(m string) string {
	sub := urlUserinfo.FindStringSubmatch(m)
	scheme, info := sub[1], sub[2]
	if user, pw, ok := strings.Cut(info, ":"); ok {
		f.found = append(f.found, pw)
		return scheme + user + ":" + Mask + "@"
	}
	switch strings.ToLower(scheme) {
	case "http://", "https://", "ws://", "wss://":
		f.found = append(f.found, info)
		return scheme + Mask + "@" // a bare token as the user name
	}
	return m // a user name alone (postgres://postgres@host) is no secret
}

// codeValue is a bare value that is code, not a secret: a call
// (token = param("token", "")) or a constant ("password": None}).
var codeValue = regexp.MustCompile(`^(?:[A-Za-z_][\w.]*\(|(?:None|True|False|null|true|false)(?:[^\w]|$))`)

func (f *finder) maskHeader(m string) string {
	sub := headerKV.FindStringSubmatch(m)
	if sub[3] == Mask || isScheme(sub[3]) {
		return m // "Authorization: Bearer " + tok: tok's value is masked where it shows
	}
	f.found = append(f.found, secretParts(sub[3])...)
	return sub[1] + sub[2] + Mask
}

func (f *finder) maskValue(m string) string {
	sub := secretKV.FindStringSubmatch(m)
	prefix, val := sub[1], sub[2]
	name := strings.Trim(strings.TrimRight(prefix, " \t=:"), `"'`)
	secret := SecretName(name)
	switch {
	case val == Mask, codeValue.MatchString(val), isScheme(strings.Trim(val, `"'`)):
		return m
	case !secret && !oldWords.MatchString(name):
		return m
	}
	// Learned only under a name that says secret: "tokens_per_s": 5123 is
	// masked (the old words' rule) but no secret to hide elsewhere.
	learn := func(v string) {
		if secret {
			f.found = append(f.found, secretParts(v)...)
		}
	}
	switch {
	case strings.HasPrefix(val, `"`):
		learn(val[1 : len(val)-1])
		return prefix + `"` + Mask + `"`
	case strings.HasPrefix(val, `'`):
		learn(val[1 : len(val)-1])
		return prefix + `'` + Mask + `'`
	}
	if !strings.ContainsAny(val, "()[]{},") { // not code: "password": pw,
		learn(val)
	}
	return prefix + Mask
}

// maskFlag masks the argument after a password flag. A list's element is
// learned; so is a command line's, unless it is a plain lower-case word
// (prose: "pass --token when asked").
func (f *finder) maskFlag(re *regexp.Regexp, m string, list bool) string {
	sub := re.FindStringSubmatch(m)
	prefix, name, val := sub[1], sub[2], sub[3]
	inner := strings.Trim(val, `"'`)
	if !FlagSecret(name) || inner == Mask || inner == "" || strings.HasPrefix(inner, "-") {
		return m
	}
	if list || !isLowerWord(inner) {
		f.found = append(f.found, inner)
	}
	if q := val[0]; q == '"' || q == '\'' {
		return prefix + string(q) + Mask + string(q)
	}
	return prefix + Mask
}

// isScheme reports whether s is an HTTP authentication scheme alone, or a
// template made of one ("Bearer %s"): the constant half of a header built
// in code, no secret, which masked alone would look redacted while the
// token after it stays.
func isScheme(s string) bool {
	return authSchemes[strings.ToLower(strings.TrimSpace(template.Replace(s)))]
}

func isLowerWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// secretWords are the words of a field name that make its value a secret.
// Short ones count (pw, pwd, pass): a column named pw is a password.
var secretWords = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "pw": true, "pass": true, "passphrase": true, "pword": true,
	"secret": true, "token": true, "key": true, "apikey": true, "apitoken": true, "authtoken": true,
	"accesstoken": true, "credential": true, "credentials": true, "cred": true, "creds": true, "auth": true,
	"authorization": true, "bearer": true, "jwt": true, "cookie": true, "cookies": true,
	"requirepass": true, "masterauth": true,
}

// SecretName reports whether a field, column or parameter named name holds
// a secret: one of its words (split at '_', '-', '.', spaces and case
// changes) is password, secret, token, key and the like, or it contains
// "password" or "secret" anywhere (PGPASSWORD).
func SecretName(name string) bool {
	if v, ok := secretNames.Load(name); ok {
		return v.(bool)
	}
	v := secretName(name)
	secretNames.Store(name, v)
	return v
}

// secretNames remembers SecretName's answers: the engine asks for every
// variable in scope before every output.
var secretNames sync.Map

func secretName(name string) bool {
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
func Value(v starlark.Value) (starlark.Value, bool) {
	var w walker
	return w.walk(v, int(limits.Depth.Get()))
}

// Field is Value for the value of a named field (a column, a dict key):
// masked whole when the name says secret (None stays None: there is
// nothing to hide).
func Field(name string, v starlark.Value) (starlark.Value, bool) {
	var w walker
	return w.field(starlark.String(name), v, int(limits.Depth.Get()))
}

// walker walks one value. A container reached again by another path (a
// list shared by reference: x = [x, x] a hundred times is 2^100 paths
// to 100 lists) is looked into once: its result is kept by its identity.
type walker struct {
	seen map[any]walked
}

type walked struct {
	v       starlark.Value
	changed bool
	done    bool // false while its elements are being walked: a cycle
}

// identity is what names a container for the walker; nil for a value
// that is not one (or an empty tuple, which holds nothing).
func identity(v starlark.Value) any {
	switch v := v.(type) {
	case *starlark.List, *starlark.Dict, *starlark.Set, *starlarkstruct.Struct:
		return v
	case starlark.Tuple:
		if len(v) > 0 {
			return tupleID{&v[0], len(v)}
		}
	}
	return nil
}

// tupleID names a tuple by its elements' array: tuples built from one
// another share it.
type tupleID struct {
	first *starlark.Value
	n     int
}

// walk looks into v, at most left more levels down (the depth limit, read
// once per value rather than once per element).
func (w *walker) walk(v starlark.Value, left int) (starlark.Value, bool) {
	if left < 0 {
		// Too deep to look inside: it may hold a secret, so it is masked
		// whole and never written. It used to pass as clean past depth
		// 64, and a secret nested deeper reached the cache.
		return starlark.String(Mask), true
	}
	id := identity(v)
	if id == nil {
		return w.look(v, left)
	}
	if r, ok := w.seen[id]; ok {
		if !r.done {
			return starlark.String(Mask), true // a cycle: masked, as too deep
		}
		return r.v, r.changed
	}
	if w.seen == nil {
		w.seen = map[any]walked{}
	}
	w.seen[id] = walked{}
	out, changed := w.look(v, left)
	w.seen[id] = walked{out, changed, true}
	return out, changed
}

func (w *walker) look(v starlark.Value, left int) (starlark.Value, bool) {
	switch v := v.(type) {
	case starlark.String:
		s := String(string(v))
		return starlark.String(s), s != string(v)
	case *starlark.List:
		elems, changed := w.walkSeq(v, left)
		if !changed {
			return v, false
		}
		return starlark.NewList(elems), true
	case starlark.Tuple:
		elems, changed := w.walkSeq(v, left)
		if !changed {
			return v, false
		}
		return starlark.Tuple(elems), true
	case *starlark.Dict:
		return w.walkDict(v, left)
	case *starlark.Set:
		return w.walkSet(v, left)
	case *starlarkstruct.Struct:
		return w.walkStruct(v, left)
	case Redacter:
		return v.Redacted()
	}
	return v, false
}

// walkSeq walks a list's or tuple's elements, with what the sequence
// says of them: the second of a pair whose first names a secret
// (("Authorization", "Bearer T"), a header list) and the argument after a
// password flag (["server", "--requirepass", "PW"]) are secrets.
func (w *walker) walkSeq(s starlark.Indexable, left int) ([]starlark.Value, bool) {
	n := s.Len()
	elems := make([]starlark.Value, n)
	changed := false
	for i := range elems {
		x := s.Index(i)
		var c bool
		switch {
		case n == 2 && i == 1 && isString(x):
			elems[i], c = w.field(s.Index(0), x, left)
		case i > 0 && flagArg(s.Index(i-1), x):
			learn([]string{string(x.(starlark.String))})
			elems[i], c = starlark.String(Mask), x != starlark.String(Mask)
		default:
			elems[i], c = w.walk(x, left-1)
		}
		changed = changed || c
	}
	return elems, changed
}

func isString(v starlark.Value) bool { _, ok := v.(starlark.String); return ok }

// flagArg reports whether x is the argument of flag, a password flag.
func flagArg(flag, x starlark.Value) bool {
	f, ok1 := flag.(starlark.String)
	a, ok2 := x.(starlark.String)
	if !ok1 || !ok2 || strings.HasPrefix(string(a), "-") || strings.Contains(string(f), "=") {
		return false
	}
	name, ok := flagName(string(f))
	return ok && FlagSecret(name)
}

func (w *walker) walkDict(d *starlark.Dict, left int) (starlark.Value, bool) {
	out := starlark.NewDict(d.Len())
	changed := false
	for _, kv := range d.Items() {
		k, kc := w.walk(kv[0], left-1)
		val, vc := w.field(kv[0], kv[1], left)
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
func (w *walker) field(name, v starlark.Value, left int) (starlark.Value, bool) {
	if s, ok := name.(starlark.String); ok && SecretName(string(s)) {
		if v == starlark.None || v == starlark.String(Mask) {
			return v, false
		}
		learnStrings(v, left)
		return starlark.String(Mask), true
	}
	return w.walk(v, left-1)
}

func (w *walker) walkSet(s *starlark.Set, left int) (starlark.Value, bool) {
	out := starlark.NewSet(s.Len())
	changed := false
	iter := s.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		y, c := w.walk(x, left-1)
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

func (w *walker) walkStruct(s *starlarkstruct.Struct, left int) (starlark.Value, bool) {
	fields := starlark.StringDict{}
	changed := false
	for _, name := range s.AttrNames() {
		v, err := s.Attr(name)
		if err != nil {
			return s, false
		}
		var c bool
		fields[name], c = w.field(starlark.String(name), v, left)
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
