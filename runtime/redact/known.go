package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/limits"
)

// The secrets the process learned (Learn, LearnValue, and whatever String
// and Value find by pattern or by name) are masked wherever they turn up
// later, whatever the notebook did with them: a secret concatenated,
// formatted, joined or repr'd into other text is still there as a
// substring, and so is a slice of it. So every output is searched for
// every known secret in the forms an output may hold it:
//
//   - as written, JSON- or Starlark-escaped, HTML-escaped: the whole
//     secret and any run of at least MinSlice bytes of it (a notebook that
//     prints pw[:8]);
//   - URL-encoded, hex, base64 (standard and URL alphabets, at the three
//     alignments a secret inside longer text can have): whole only, since
//     a few bytes of hex or base64 turn up by chance in hashes and data;
//
// a whole secret case-insensitively (a download's file name is
// lower-cased), a slice as it is (a slice "TOKEN1" of a secret is no
// reason to mask every "token1" of a record). The search
// is a 6-byte window rolled over the text and looked up in a bit filter
// then a map of the secrets' windows, so it costs a few nanoseconds a byte
// however many secrets there are. Secrets shorter than MinSlice (4 and 5
// bytes) are searched for whole.
//
// The set lives in this process only: nothing of it is written, so a
// record rendered later from the cache relies on what was masked when the
// outputs were stored, and on the notebook's source (the literals a cell
// puts under a secret name, found again by analysis).

// MinSlice is the shortest run of a secret's bytes masked on its own.
const MinSlice = 6

// minLearned is the shortest secret kept: masking every "42" of a record
// would hide the measurements, not a password.
const minLearned = 4

// needle is one form of a secret to search for.
type needle struct {
	text  string // ASCII lower-cased
	orig  string // as learned: a slice must match it case and all
	slice bool   // a run of MinSlice bytes of it is masked; else only the whole
}

// gramRef is a needle holding a window, and where.
type gramRef struct{ needle, off int32 }

// known is the set and its index. It grows in place under learned's
// lock, by what each secret adds: a table column of ten thousand tokens
// is learned one cell at a time, and rebuilding the index for each made
// that quadratic.
type known struct {
	secrets map[string]bool // sliced (else masked whole only)
	needles []needle
	byText  map[string]int // needle index by orig
	grams   map[uint64][]gramRef
	filter  []uint64 // bit filter on the windows' keys
	short   []string // needles shorter than MinSlice, searched whole
	refs    int      // windows indexed
}

const filterBits = 20

// maxRefs bounds the windows of slices in the index (about 40 bytes a
// window): past it, a new secret is masked whole only (a window a form),
// and its slices no longer; the thousands of secrets that fill it come
// from a column of them, masked by name wherever the table shows.
var maxRefs = 1 << 20

var learned struct {
	sync.RWMutex
	k   *known
	gen uint64 // how many times the set grew
}

// Generation counts the times the set grew: an output stored at an
// earlier generation may hold a secret learned since.
func Generation() uint64 {
	learned.RLock()
	defer learned.RUnlock()
	return learned.gen
}

func init() { forgetAll() }

// forgetAll empties the set (tests).
func forgetAll() {
	learned.Lock()
	defer learned.Unlock()
	learned.k = newKnown()
}

func newKnown() *known {
	return &known{secrets: map[string]bool{}, byText: map[string]int{}, grams: map[uint64][]gramRef{},
		filter: make([]uint64, 1<<filterBits/64)}
}

// placeholders are never learned: they hide nothing (token = "none"), and
// masking every "none" of a record would hide its data.
var placeholders = map[string]bool{"none": true, "null": true, "nil": true, "unset": true, "empty": true,
	"default": true, "changeme": true, "true": true, "false": true}

// authSchemes are the HTTP authentication schemes: "Bearer " is no secret,
// the token after it is.
var authSchemes = map[string]bool{"bearer": true, "basic": true, "token": true, "digest": true, "negotiate": true,
	"ntlm": true, "apikey": true, "hoba": true, "mutual": true, "aws4-hmac-sha256": true, "dpop": true}

// template is a format string's placeholders: "Bearer %s" and "Bearer {}"
// are the fixed part of a header, not a secret.
var template = strings.NewReplacer("%s", "", "%r", "", "%d", "", "%v", "", "{}", "", "{0}", "", "{1}", "")

// worthLearning reports whether s could be a secret: long enough, not a
// placeholder, not the mask, not an authentication scheme or a template
// made of one.
func worthLearning(s string) bool {
	t := strings.TrimSpace(template.Replace(s))
	switch {
	case len(t) < minLearned, t == Mask, placeholders[strings.ToLower(t)], authSchemes[strings.ToLower(t)]:
		return false
	case secretWords[strings.ToLower(strings.Trim(t, "-_"))]:
		return false // code, not a secret: connect(password=password)
	case strings.Trim(t, Mask+"'\"") == "":
		return false
	}
	return true
}

func learn(found []string) { learnAs(found, true) }

// learnAs adds found to the set; slice says whether runs of their bytes
// are masked too, or only each whole.
func learnAs(found []string, slice bool) {
	var add []string
	learned.RLock()
	for _, s := range found {
		s = strings.TrimSpace(s)
		if sl, ok := learned.k.secrets[s]; (!ok || slice && !sl && !hasScheme(s)) && worthLearning(s) {
			add = append(add, s)
		}
	}
	learned.RUnlock()
	if len(add) == 0 {
		return
	}
	learned.Lock()
	defer learned.Unlock()
	for _, s := range add {
		learned.k.add(s, slice)
	}
	learned.gen++
}

// LearnDerived remembers the strings of a value computed from a secret
// (rev = tok[::-1], parts = tok.split("_")) as secrets, each masked
// whole: a value that holds a secret String already hides (a DSN built
// with the password) is left to it, so that the rest of it stays legible,
// and no slice of a derived value is masked, which would hide the
// "postgres" of every DSN once one was derived from a password.
func LearnDerived(v starlark.Value) {
	var all []string
	collectStrings(v, int(limits.Depth.Get()), &all)
	var found []string
	for _, s := range all {
		if String(s) == s {
			found = append(found, s)
		}
	}
	learnAs(found, false)
}

func collectStrings(v starlark.Value, left int, out *[]string) {
	collect(v, left, out, map[any]bool{})
}

// collect gathers the strings of v into out, looking into each container
// once however many paths reach it (see walker).
func collect(v starlark.Value, left int, out *[]string, seen map[any]bool) {
	if left < 0 {
		return
	}
	if id := identity(v); id != nil {
		if seen[id] {
			return
		}
		seen[id] = true
	}
	switch v := v.(type) {
	case starlark.String:
		*out = append(*out, string(v))
	case starlark.Bytes:
		*out = append(*out, string(v))
	case starlark.Indexable:
		for i := 0; i < v.Len(); i++ {
			collect(v.Index(i), left-1, out, seen)
		}
	case starlark.IterableMapping:
		for _, kv := range v.Items() {
			collect(kv[1], left-1, out, seen)
		}
	case *starlarkstruct.Struct:
		for _, name := range v.AttrNames() {
			if x, err := v.Attr(name); err == nil && x != nil {
				collect(x, left-1, out, seen)
			}
		}
	}
}

// add indexes every form of secret s.
func (k *known) add(s string, slice bool) {
	if sl, ok := k.secrets[s]; ok && (sl || !slice) {
		return
	}
	slice = slice && !hasScheme(s)
	k.secrets[s] = slice
	for _, f := range textForms(s) {
		k.addNeedle(f, slice)
	}
	for _, f := range encodedForms(s) {
		k.addNeedle(f, false)
	}
}

// addNeedle indexes one form: its first window, to find it whole, and,
// sliced, every other window.
func (k *known) addNeedle(orig string, slice bool) {
	if len(orig) < minLearned {
		return
	}
	slice = slice && k.refs < maxRefs
	i, ok := k.byText[orig]
	from := 0
	switch {
	case ok && (!slice || k.needles[i].slice || len(orig) < MinSlice):
		return
	case ok:
		k.needles[i].slice, from = true, 1 // its first window is there
	default:
		i = len(k.needles)
		k.byText[orig] = i
		k.needles = append(k.needles, needle{text: foldString(orig), orig: orig, slice: slice})
	}
	text := k.needles[i].text
	if len(text) < MinSlice {
		k.short = append(k.short, text)
		return
	}
	last := 0
	if slice {
		last = len(text) - MinSlice
	}
	for off := from; off <= last; off++ {
		key := gramKey(text[off:])
		k.grams[key] = append(k.grams[key], gramRef{int32(i), int32(off)})
		h := filterHash(key)
		k.filter[h/64] |= 1 << (h % 64)
		k.refs++
	}
}

// hasScheme reports whether s is an Authorization value ("Bearer T"): it
// is masked whole, its slices only through the token's own (secretParts
// learns T too), so that "Bearer" alone is never masked.
func hasScheme(s string) bool {
	scheme, _, ok := strings.Cut(s, " ")
	return ok && authSchemes[strings.ToLower(scheme)]
}

// textForms are the forms of s that text shows as text: as it is, escaped
// in a JSON or Starlark string literal, escaped in HTML.
func textForms(s string) []string {
	out := []string{s}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, escapeHTML := range []bool{false, true} {
		b.Reset()
		enc.SetEscapeHTML(escapeHTML)
		if enc.Encode(s) == nil {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(b.String()), `"`)[1:])
		}
	}
	q := strconv.Quote(s)
	out = append(out, q[1:len(q)-1])
	r := starlark.String(s).String()
	out = append(out, r[1:len(r)-1])
	h := html.EscapeString(s)
	out = append(out, h, strings.NewReplacer("&#39;", "&#x27;", "&#34;", "&quot;").Replace(h))
	return out
}

// encodedForms are s URL-encoded, in hex and in base64. A secret inside a
// longer text starts at any byte of base64's 3-byte groups, so each
// alignment gives the encoding of the groups s fills whole.
func encodedForms(s string) []string {
	out := []string{url.QueryEscape(s), url.PathEscape(s), hex.EncodeToString([]byte(s))}
	for shift := 0; shift < 3 && shift < len(s); shift++ {
		mid := s[shift:]
		mid = mid[:len(mid)/3*3]
		if len(mid) < MinSlice {
			continue
		}
		out = append(out, base64.StdEncoding.EncodeToString([]byte(mid)), base64.URLEncoding.EncodeToString([]byte(mid)))
	}
	return out
}

func fold(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func foldString(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = fold(b[j])
			}
			return string(b)
		}
	}
	return s
}

// gramKey packs the first MinSlice bytes of folded text.
func gramKey(s string) uint64 {
	var k uint64
	for i := 0; i < MinSlice; i++ {
		k = k<<8 | uint64(fold(s[i]))
	}
	return k
}

const gramMask = 1<<(8*MinSlice) - 1

func filterHash(key uint64) uint64 { return key * 0x9E3779B97F4A7C15 >> (64 - filterBits) }

// span is a byte range of a text to mask.
type span struct{ lo, hi int }

// find returns the spans of s that hold a known secret, in order, merged.
func (k *known) find(s string) []span {
	var out []span
	if len(k.short) > 0 {
		lower := foldString(s)
		for _, n := range k.short {
			for i := 0; ; {
				j := strings.Index(lower[i:], n)
				if j < 0 {
					break
				}
				out = append(out, span{i + j, i + j + len(n)})
				i += j + 1
			}
		}
	}
	if len(k.grams) == 0 || len(s) < MinSlice {
		return merge(out)
	}
	// runs: the alignment (start of the needle in s) and end of the last
	// match per needle, so a match is measured once, not once per window.
	runs := map[int32]span{}
	var key uint64
	for i := 0; i < len(s); i++ {
		key = (key<<8 | uint64(fold(s[i]))) & gramMask
		start := i + 1 - MinSlice
		if start < 0 {
			continue
		}
		if h := filterHash(key); k.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, r := range k.grams[key] {
			if prev, ok := runs[r.needle]; ok && prev.lo == start-int(r.off) && start < prev.hi {
				continue
			}
			n := k.needles[r.needle]
			align := start - int(r.off)
			if r.off == 0 && commonPrefix(s[start:], n.text) == len(n.text) {
				runs[r.needle] = span{align, start + len(n.text)}
				out = append(out, span{start, start + len(n.text)})
				continue
			}
			if !n.slice {
				continue
			}
			// A slice, case and all: no run at this alignment reaches past
			// the first difference.
			l := exactPrefix(s[start:], n.orig[r.off:])
			runs[r.needle] = span{align, start + l + 1}
			if l >= MinSlice {
				out = append(out, span{start, start + l})
			}
		}
	}
	return merge(out)
}

// commonPrefix is the length of the longest common prefix of s and the
// folded t, ignoring ASCII case.
func commonPrefix(s, t string) int {
	n := min(len(s), len(t))
	for i := 0; i < n; i++ {
		if fold(s[i]) != t[i] {
			return i
		}
	}
	return n
}

func exactPrefix(s, t string) int {
	n := min(len(s), len(t))
	for i := 0; i < n; i++ {
		if s[i] != t[i] {
			return i
		}
	}
	return n
}

func merge(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	out := spans[:1]
	for _, s := range spans[1:] {
		if last := &out[len(out)-1]; s.lo <= last.hi {
			last.hi = max(last.hi, s.hi)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// hideLearned masks every known secret in s. A span is widened to whole
// characters, so a mask never leaves half a UTF-8 sequence behind.
func hideLearned(s string) string {
	spans := findKnown(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, sp := range spans {
		lo, hi := sp.lo, sp.hi
		for lo > 0 && !utf8Start(s[lo]) {
			lo--
		}
		for hi < len(s) && !utf8Start(s[hi]) {
			hi++
		}
		if lo < at {
			lo = at
		}
		b.WriteString(s[at:lo])
		if lo < hi {
			b.WriteString(Mask)
		}
		at = hi
	}
	b.WriteString(s[at:])
	return b.String()
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Known reports whether s holds a secret the process learned.
func Known(s string) bool { return len(findKnown(s)) > 0 }

func findKnown(s string) []span {
	learned.RLock()
	defer learned.RUnlock()
	return learned.k.find(s)
}

// learnStrings learns every string inside v: the value of a field whose
// name says secret, whatever its shape (a tuple ("u", "PW"), a list).
func learnStrings(v starlark.Value, left int) {
	var all []string
	collectStrings(v, left, &all)
	for _, s := range all {
		learn(secretParts(s))
	}
}

// isWord reports whether s is letters only.
func isWord(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return s != ""
}
