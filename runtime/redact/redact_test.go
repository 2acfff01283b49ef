package redact

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// TestStringHostileForms: each input hides the secret "PW..." part and
// keeps what a reader needs (scheme, user, host, the other keywords).
func TestStringHostileForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:pw1@h/db", "postgres://u:xxxxx@h/db"},
		{"postgresql://u:pw2@h:5432/db?sslmode=disable", "postgresql://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgres://u:s3cr@tAT@host/db", "postgres://u:xxxxx@host/db"},
		{"postgres://u:a:b@c@d:e@host", "postgres://u:xxxxx@host"},
		{"postgres://u:p%40w@h/db", "postgres://u:xxxxx@h/db"},
		{"http://alice:pw3@127.0.0.1:8080/x", "http://alice:xxxxx@127.0.0.1:8080/x"},
		{"HTTPS://alice:pw4@example.com", "HTTPS://alice:xxxxx@example.com"},
		{"https://ghp_TOKEN123@github.com/o/r", "https://xxxxx@github.com/o/r"},
		{"postgres://postgres@127.0.0.1/db", "postgres://postgres@127.0.0.1/db"},
		{"GET http://u:p@w@h/search?q=a@b", "GET http://u:xxxxx@h/search?q=a@b"},
		{`dsn = "postgres://u:pw5@h/db"`, `dsn = "postgres://u:xxxxx@h/db"`},
		{`'postgres://u:pw6@h'`, `'postgres://u:xxxxx@h'`},
		{"two: postgres://a:x1@h1 and http://b:x2@h2/", "two: postgres://a:xxxxx@h1 and http://b:xxxxx@h2/"},
		{"host=h password=pw7 user=u", "host=h password=xxxxx user=u"},
		{"host=h password='p w 8' user=u", "host=h password='xxxxx' user=u"},
		{`host=h password = 'it\'s 9' user=u`, `host=h password = 'xxxxx' user=u`},
		{`host=h PASSWORD="p w 10" user=u`, `host=h PASSWORD="xxxxx" user=u`},
		{"postgres://h/db?password=pw11&sslmode=disable", "postgres://h/db?password=xxxxx&sslmode=disable"},
		{`struct(password = "pw12", user = "u")`, `struct(password = "xxxxx", user = "u")`},
		{`{"user": "u", "password": "pw13"}`, `{"user": "u", "password": "xxxxx"}`},
		{"PGPASSWORD=pw14 psql", "PGPASSWORD=xxxxx psql"},
		{"-p api_token=pw15", "-p api_token=xxxxx"},
		{"client_secret: pw16", "client_secret: xxxxx"},
		{"nothing to hide: 42 req/s, key=t0042", "nothing to hide: 42 req/s, key=t0042"},
		{"password=xxxxx", "password=xxxxx"},
		{"ALTER ROLE bench WITH LOGIN PASSWORD 'it''s pw17'", "ALTER ROLE bench WITH LOGIN PASSWORD 'xxxxx'"},
		{`token = param("api_token", "none")`, `token = param("api_token", "none")`},
		{`[{"user": "v", "password": None}])`, `[{"user": "v", "password": None}])`},
		{"password=Nonesuch1", "password=xxxxx"},
		{"host=h password=a,b(c) user=u", "host=h password=xxxxx user=u"},
		{`{"X-Api-Key": "hk1", "api-key": 'hk2'}`, `{"X-Api-Key": "xxxxx", "api-key": 'xxxxx'}`},
		{"X-API-KEY=hk3 next", "X-API-KEY=xxxxx next"},
		{"Authorization: Bearer abc.def", "Authorization: xxxxx"},
		{"curl -H 'Authorization: Basic dTpw' http://h/", "curl -H 'Authorization: xxxxx' http://h/"},
		{`{"Authorization": "Bearer tok2", "Cookie": "session=ck2; theme=dark"}`, `{"Authorization": "xxxxx", "Cookie": "xxxxx"}`},
		{"Cookie: session=ck3; theme=dark\nHost: h", "Cookie: xxxxx\nHost: h"},
		{"Set-Cookie: id=ck4; Path=/", "Set-Cookie: xxxxx"},
		{`{"auth": "u:au1", "credentials": "cr1", "cookie": "ck5"}`, `{"auth": "xxxxx", "credentials": "xxxxx", "cookie": "xxxxx"}`},
		{`author = "Ann", oauth_callback=http://h/cb, authority: h`, `author = "Ann", oauth_callback=http://h/cb, authority: h`},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n  = %q\nwant %q", tc.in, got, tc.want)
		}
		if again := String(tc.want); again != tc.want {
			t.Errorf("String is not idempotent on %q: %q", tc.want, again)
		}
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "PGPASSWORD": true, "db_passwd": true, "pwd": true, "secret": true,
		"client_secret": true, "token": true, "api_token": true, "apiKey": true, "api-key": true,
		"API_KEY": true, "key": true, "Authorization": true, "credentials": true,
		"dsn": false, "user": false, "keyspace": false, "monkey": false, "tokens_per_s": false,
		"clients": false, "host": false, "passes": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestValue: secrets inside nested values are hidden, by text and by the
// name of the field holding them; a value without any comes back as is.
func TestValue(t *testing.T) {
	d := starlark.NewDict(2)
	d.SetKey(starlark.String("user"), starlark.String("u"))
	d.SetKey(starlark.String("password"), starlark.String("pwA"))
	st := starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"token": starlark.MakeInt(12345), "note": starlark.String("host=h password=pwB"),
		"unset_key": starlark.None,
	})
	in := starlark.NewList([]starlark.Value{
		starlark.String("postgres://u:pwC@h/db"),
		starlark.Tuple{d, st},
	})
	out, changed := Value(in)
	text := out.String()
	if !changed {
		t.Fatal("Value reported no secret")
	}
	for _, pw := range []string{"pwA", "pwB", "pwC", "12345"} {
		if strings.Contains(text, pw) {
			t.Errorf("%s survived: %s", pw, text)
		}
	}
	if !strings.Contains(text, `"user": "u"`) || !strings.Contains(text, "unset_key = None") {
		t.Errorf("too much hidden: %s", text)
	}
	if strings.Contains(in.String(), "xxxxx") {
		t.Errorf("the input was modified: %s", in)
	}
	plain := starlark.NewList([]starlark.Value{starlark.String("GET http://127.0.0.1/"), starlark.MakeInt(3)})
	if got, changed := Value(plain); changed || got != starlark.Value(plain) {
		t.Errorf("a value without secrets came back changed: %v", got)
	}
}

func TestArgs(t *testing.T) {
	got := strings.Join(Args([]string{"benchbook", "run", "-p", "dsn=postgres://u:pw1@h/db", "-p", "token=pw2",
		"-p=apikey=pw3", "-p", "clients=8", "nb.star"}), " ")
	want := "benchbook run -p dsn=postgres://u:xxxxx@h/db -p token=xxxxx -p=apikey=xxxxx -p clients=8 nb.star"
	if got != want {
		t.Errorf("Args = %q\nwant %q", got, want)
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := Writer(&buf)
	line := "benchbook run: connect postgres://u:pwW@h/db: refused\n"
	n, err := fmt.Fprint(w, line)
	if err != nil || n != len(line) {
		t.Fatalf("Fprint = %d, %v; want %d, nil", n, err, len(line))
	}
	if strings.Contains(buf.String(), "pwW") || !strings.Contains(buf.String(), "refused") {
		t.Errorf("wrote %q", buf.String())
	}
	if Writer(w) != w {
		t.Error("a redacting writer was wrapped twice")
	}
}

// TestDeepSecretIsHidden: a secret nested deeper than the walk goes is
// reported and masked. Before, the walk stopped at depth 64 and called
// the value clean, so the cache stored the password.
func TestDeepSecretIsHidden(t *testing.T) {
	var v starlark.Value = starlark.String("postgres://u:pwDeep@h/db")
	for range 2000 {
		v = starlark.NewList([]starlark.Value{v})
	}
	out, secret := Value(v)
	if !secret {
		t.Fatal("a secret 2000 levels down was called clean")
	}
	if strings.Contains(out.String(), "pwDeep") {
		t.Error("the deep secret survived")
	}
}

// TestWordsSkipOnlyWhatCannotMatch: String, which runs a pattern only
// where its words are, hides what every pattern run on every text hides,
// on random texts of secret-looking names, values, separators, case
// changes and the characters (?i) folds into ASCII letters.
func TestWordsSkipOnlyWhatCannotMatch(t *testing.T) {
	timing.Only(t, "one goroutine's String checked against every pattern on 20,000 texts: nothing for -race to find, ten times slower under it")
	all := func(s string) string {
		s = hideLearned(s)
		var f finder
		s = urlUserinfo.ReplaceAllStringFunc(s, f.maskUserinfo)
		s, _ = maskSQL(s)
		s = headerKV.ReplaceAllStringFunc(s, f.maskHeader)
		s = secretKV.ReplaceAllStringFunc(s, f.maskValue)
		s = listFlag.ReplaceAllStringFunc(s, func(m string) string { return f.maskFlag(listFlag, m, true) })
		return shellFlag.ReplaceAllStringFunc(s, func(m string) string { return f.maskFlag(shellFlag, m, false) })
	}
	pieces := []string{"password", "PassWord", "paſſword", "passwd", "PWD", "secret", "Token", "api_key", "API-KEY", "apikey", "access-key",
		"private_key", "auth", "Authorization", "proxy-authorization", "Set-Cookie", "cookie", "coo", "kie", "credential", "author",
		"Kelvin:", "toKen", "=", ":", " = ", ": ", "'", "\"", "@", "://", "postgres", "https", "u:pw", "host", "/db", " ", "\n", "hunter2", "x", "&", ";", "é"}
	t.Cleanup(forgetAll) // what it learned is noise to the other tests
	rng := rand.New(rand.NewPCG(38, 2))
	changed := 0
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		want := all(s)
		if got := String(s); got != want {
			t.Fatalf("String(%q) = %q, every pattern gives %q", s, got, want)
		}
		if want != s {
			changed++
		}
	}
	if changed < 1000 {
		t.Errorf("only %d of 20000 texts held a secret: the test tests little", changed)
	}
}

// TestSQLPasswordQuotings: a password literal in every quoting PostgreSQL
// takes is hidden, and HasSQLPassword sees it. Before, only 'PW' was.
func TestSQLPasswordQuotings(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"CREATE ROLE r PASSWORD 'Sq1pw'", "CREATE ROLE r PASSWORD 'xxxxx'"},
		{"ALTER ROLE r PASSWORD $$Sq2 'pw'$$", "ALTER ROLE r PASSWORD $$xxxxx$$"},
		{"ALTER ROLE r PASSWORD $tag$Sq3$pw$tag$ VALID UNTIL 'infinity'", "ALTER ROLE r PASSWORD $tag$xxxxx$tag$ VALID UNTIL 'infinity'"},
		{`ALTER ROLE r PASSWORD E'Sq4\'pw\\'`, `ALTER ROLE r PASSWORD E'xxxxx'`},
		{"alter role r encrypted password e'Sq5pw'", "alter role r encrypted password e'xxxxx'"},
		{"ALTER ROLE r PASSWORD U&'Sq6\\0070w' UESCAPE '!'", "ALTER ROLE r PASSWORD U&'xxxxx' UESCAPE '!'"},
		{"ALTER ROLE r PASSWORD N'Sq7pw'", "ALTER ROLE r PASSWORD N'xxxxx'"},
		{"ALTER ROLE r PASSWORD /* new */\n\t'Sq8pw'", "ALTER ROLE r PASSWORD /* new */\n\t'xxxxx'"},
		{"CREATE USER MAPPING FOR u SERVER s OPTIONS (user 'u', password 'Sq9pw')", "CREATE USER MAPPING FOR u SERVER s OPTIONS (user 'u', password 'xxxxx')"},
		{"ALTER ROLE r PASSWORD NULL", "ALTER ROLE r PASSWORD NULL"},
		{"SET password_encryption TO md5", "SET password_encryption TO md5"},
		{"SELECT $1::text AS password", "SELECT $1::text AS password"},
	} {
		got := String(tc.in)
		if got != tc.want {
			t.Errorf("String(%q)\n  = %q\nwant %q", tc.in, got, tc.want)
		}
		if want := tc.in != tc.want; HasSQLPassword(tc.in) != want {
			t.Errorf("HasSQLPassword(%q) = %v, want %v", tc.in, !want, want)
		}
	}
	// Each password found is learned: alone, later, it is hidden too.
	if got := String("then Sq3$pw and Sq2 'pw' alone"); strings.Contains(got, "Sq3") || strings.Contains(got, "Sq2") {
		t.Errorf("a SQL password was not learned: %q", got)
	}
}

// TestPasswordFlags: the argument after a password flag is hidden in a
// command line and in an argv list's repr, and learned; a flag whose value
// is a path or a mode keeps it, and so does -p (a port).
func TestPasswordFlags(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis-server --requirepass Fl1pw --port 6390", "redis-server --requirepass xxxxx --port 6390"},
		{`["server", "--requirepass", "Fl2pw"]`, `["server", "--requirepass", "xxxxx"]`},
		{"srv --api-key 'Fl3 pw' -v", "srv --api-key 'xxxxx' -v"},
		{"srv --masterauth Fl4pw", "srv --masterauth xxxxx"},
		{"srv --token-file /run/tok --auth-mode md5 -p 5432", "srv --token-file /run/tok --auth-mode md5 -p 5432"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n  = %q\nwant %q", tc.in, got, tc.want)
		}
	}
	argv := starlark.NewList([]starlark.Value{starlark.String("server"), starlark.String("--requirepass"), starlark.String("Fl5pwArg")})
	if out, secret := Value(argv); !secret || strings.Contains(out.String(), "Fl5pwArg") {
		t.Errorf("Value(argv) = %v, %v", out, secret)
	}
	if got := String("ready; auth with Fl5pwArg ok"); strings.Contains(got, "Fl5pwArg") {
		t.Errorf("the argv's password was not learned: %q", got)
	}
}

// TestLearnedSecretEveryForm: a secret learned once is hidden later in
// every form an output may hold it: as it is (any case), sliced (6 bytes
// and more), escaped for JSON, Starlark or HTML, URL-encoded, in hex and
// in base64 at every alignment inside longer text. Before, only the
// whole secret as written was.
func TestLearnedSecretEveryForm(t *testing.T) {
	const secret = `Ev1<"pw">&/+?Tail9`
	LearnValue(secret)
	forms := map[string]string{
		"as is":        "x " + secret + " y",
		"upper case":   strings.ToUpper(secret),
		"slice head":   "got " + secret[:6],
		"slice middle": "got " + secret[3:11] + "!",
		"slice tail":   secret[len(secret)-7:],
		"json":         `{"v": "Ev1\u003c\"pw\"\u003e\u0026/+?Tail9"}`,
		"repr":         `"Ev1<\"pw\">&/+?Tail9"`,
		"html":         "<td>Ev1&lt;&#34;pw&#34;&gt;&amp;/+?Tail9</td>",
		"url":          "q=Ev1%3C%22pw%22%3E%26%2F%2B%3FTail9&x=1",
		"hex":          "0x" + fmt.Sprintf("%x", secret),
	}
	for shift := range 3 {
		text := strings.Repeat("a", shift) + secret + "zz"
		forms[fmt.Sprintf("base64 at %d", shift)] = "data:" + base64Std(text)
	}
	for what, text := range forms {
		got := String(text)
		if !strings.Contains(got, Mask) {
			t.Errorf("%s: %q came out as %q", what, text, got)
		}
	}
	// Not masked: a run shorter than MinSlice, and a slice in another case.
	for _, text := range []string{"Tail9 and Ev1<", "TAIL9 eV1<\"PW\">"} {
		if got := String(text); got != text {
			t.Errorf("String(%q) = %q: too much hidden", text, got)
		}
	}
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestBearerNeverMaskedAlone: "Bearer " learned as a secret (the constant
// half of a header built by concatenation) is no secret; the token after
// it is. Before, "Bearer " was learned, so "Bearer T" came out as
// "xxxxxT": redacted-looking, the token in clear.
func TestBearerNeverMaskedAlone(t *testing.T) {
	LearnValue("Bearer ")
	LearnValue("Bearer %s")
	Learn("Authorization", "Bearer Br1tokenValue")
	for in, want := range map[string]string{
		`h = {"Authorization": "Bearer " + tok}`:   `h = {"Authorization": "Bearer " + tok}`,
		`h = {"Authorization": "Bearer %s" % tok}`: `h = {"Authorization": "Bearer %s" % tok}`,
		`hdr = "Authorization: Bearer " + tok`:     `hdr = "Authorization: Bearer " + tok`,
		"sent Bearer Br2other":                     "sent Bearer Br2other",
		"sent Br1tokenValue":                       "sent xxxxx",
		"Bearer Br1tokenValue":                     "xxxxx",
		"tok[:8] = Br1token":                       "tok[:8] = xxxxx",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShortSecretNames: parameters and columns named pw (and other short
// names) hold secrets.
func TestShortSecretNames(t *testing.T) {
	for _, name := range []string{"pw", "db_pw", "PW", "pwd", "pass", "passwd", "creds", "apitoken", "requirepass"} {
		if !SecretName(name) {
			t.Errorf("SecretName(%q) = false", name)
		}
	}
	for _, name := range []string{"pwm", "power", "passes", "bypass_cache", "keyspace"} {
		if SecretName(name) {
			t.Errorf("SecretName(%q) = true", name)
		}
	}
}

// TestHeaderPairs: a header given as a list of pairs is hidden by its
// name, like a dict's entry, and its value learned.
func TestHeaderPairs(t *testing.T) {
	v := starlark.NewList([]starlark.Value{
		starlark.Tuple{starlark.String("Accept"), starlark.String("text/plain")},
		starlark.Tuple{starlark.String("Authorization"), starlark.String("Bearer Hp1tokenPair")},
	})
	out, secret := Value(v)
	if !secret || strings.Contains(out.String(), "Hp1tokenPair") || !strings.Contains(out.String(), "text/plain") {
		t.Errorf("Value = %v, %v", out, secret)
	}
	if got := String("token: Hp1tokenPair[:6] = Hp1tok"); strings.Contains(got, "Hp1tok") {
		t.Errorf("not learned: %q", got)
	}
}

// BenchmarkStringLearned: String over a record-sized text (source code,
// figures, hashes) with 60 secrets learned, none of them in it.
func BenchmarkStringLearned(b *testing.B) {
	b.Cleanup(forgetAll)
	rng := rand.New(rand.NewPCG(48, 1))
	for i := range 60 {
		LearnValue(fmt.Sprintf("Bench%02dsecret%x", i, rng.Uint64()))
	}
	var text strings.Builder
	for text.Len() < 1<<20 {
		fmt.Fprintf(&text, "r = workload.http(url, clients = %d) # %x p99 = %.3f ms\n", rng.IntN(64), rng.Uint64(), rng.Float64()*100)
	}
	s := text.String()
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for range b.N {
		String(s)
	}
}

// TestManySecretsLearnedOneByOne: a column of 10,000 tokens, learned a
// cell at a time as Value walks it, takes a second, not the minutes that
// rebuilding the index for each took; past the index's bound (lowered
// here to 50,000 windows) the later ones are still masked, whole.
func TestManySecretsLearnedOneByOne(t *testing.T) {
	timing.Only(t, "10,000 secrets indexed, timed")
	forgetAll()
	t.Cleanup(forgetAll)
	defer func(m int) { maxRefs = m }(maxRefs)
	maxRefs = 50000
	rows := make([]starlark.Value, 10000)
	for i := range rows {
		d := starlark.NewDict(1)
		d.SetKey(starlark.String("token"), starlark.String(fmt.Sprintf("Many%05dTok%x", i, i*7919)))
		rows[i] = d
	}
	start := time.Now()
	Value(starlark.NewList(rows))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("learning 10,000 secrets took %v", took)
	}
	learned.RLock()
	refs := learned.k.refs
	learned.RUnlock()
	if refs > maxRefs+12*len(rows) { // past the bound, a window or so a form
		t.Errorf("%d windows indexed, bound %d", refs, maxRefs)
	}
	last := fmt.Sprintf("Many%05dTok%x", 9999, 9999*7919)
	if got := String("first Many00000Tok0 last " + last); strings.Contains(got, "Many") {
		t.Errorf("String = %q", got)
	}
	LearnValue("QqBeyond7Bound")
	if got := String("whole QqBeyond7Bound, a slice Beyond7Bo"); got != "whole xxxxx, a slice Beyond7Bo" {
		t.Errorf("String = %q: a secret past the bound is masked whole, not sliced", got)
	}
}

// TestOldWordsMaskButTeachNothing: a value under a name the old words
// match but that says no secret (tokens_per_s) is masked there, as
// before, and not learned: the same figure elsewhere stays.
func TestOldWordsMaskButTeachNothing(t *testing.T) {
	if got := String("tokens_per_s=5123.47 ok"); got != "tokens_per_s=xxxxx ok" {
		t.Errorf("String = %q", got)
	}
	if got := String("p99 5123.47 ms"); got != "p99 5123.47 ms" {
		t.Errorf("String = %q: a figure was learned as a secret", got)
	}
}

// TestSharedValueWalkedOnce: a list shared by reference, doubled a hundred
// times (x = [x, x]), is 2^100 paths to 101 lists. Each walk of a value
// (Value, and the strings a secret field teaches) looked into every path
// and never ended; it now looks into each list once, and still masks the
// secret wherever the shared list appears.
func TestSharedValueWalkedOnce(t *testing.T) {
	x := starlark.Value(starlark.NewList([]starlark.Value{starlark.String("postgres://u:Sh4redPw9@h/db")}))
	for range 100 {
		x = starlark.NewList([]starlark.Value{x, x})
	}
	done := make(chan starlark.Value, 1)
	go func() {
		out, secret := Value(x)
		if !secret {
			t.Error("the DSN's password was not found")
		}
		Field("password", x) // learns every string inside
		done <- out
	}()
	select {
	case out := <-done:
		// Follow one path down: the leaf is masked.
		v := out
		for range 100 {
			v = v.(*starlark.List).Index(1)
		}
		if s := v.(*starlark.List).Index(0).String(); strings.Contains(s, "Sh4redPw9") {
			t.Errorf("the shared leaf kept its password: %s", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("walking a value shared by reference did not end in 5 s")
	}
}
