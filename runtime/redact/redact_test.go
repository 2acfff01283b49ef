package redact

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

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
		s = urlUserinfo.ReplaceAllStringFunc(s, maskUserinfo)
		s = sqlPassword.ReplaceAllString(s, "${1}'"+Mask+"'")
		s = headerKV.ReplaceAllStringFunc(s, maskHeader)
		return secretKV.ReplaceAllStringFunc(s, maskValue)
	}
	pieces := []string{"password", "PassWord", "paſſword", "passwd", "PWD", "secret", "Token", "api_key", "API-KEY", "apikey", "access-key",
		"private_key", "auth", "Authorization", "proxy-authorization", "Set-Cookie", "cookie", "coo", "kie", "credential", "author",
		"Kelvin:", "toKen", "=", ":", " = ", ": ", "'", "\"", "@", "://", "postgres", "https", "u:pw", "host", "/db", " ", "\n", "hunter2", "x", "&", ";", "é"}
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
