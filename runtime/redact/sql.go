package redact

import "strings"

// SQL sets a password with CREATE/ALTER ROLE ... [ENCRYPTED] PASSWORD
// 'PW' (and CREATE USER MAPPING ... OPTIONS (password 'PW')), and
// PostgreSQL takes the literal in any of its quotings: 'PW' with ''
// doubled, E'PW' with backslash escapes, U&'PW' (UESCAPE 'c' after it),
// N'PW', and the dollar quotes $$PW$$ and $tag$PW$tag$, which a regular
// expression cannot close (RE2 has no back-references). sqlPasswords
// scans for the keyword and reads the literal after it as the server's
// lexer would.

// sqlPasswords returns the spans of the contents of the literals after
// the word PASSWORD in s. A literal left open runs to the end of s.
func sqlPasswords(s string) []span {
	var out []span
	lower := foldString(s)
	for at := 0; ; {
		i := strings.Index(lower[at:], "password")
		if i < 0 {
			return out
		}
		i += at
		at = i + len("password")
		if i > 0 && isIdentByte(lower[i-1]) || at < len(s) && isIdentByte(lower[at]) {
			continue // password_encryption, db_password
		}
		if sp, ok := sqlLiteral(s, skipSpace(s, at)); ok {
			out = append(out, sp)
			at = sp.hi
		}
	}
}

func isIdentByte(b byte) bool {
	return b == '_' || b == '$' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b >= 0x80
}

// skipSpace skips white space and comments (-- to the end of the line,
// /* */, not nested).
func skipSpace(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f':
			i++
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return len(s)
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return len(s)
			}
			i += j + 4
		default:
			return i
		}
	}
	return i
}

// sqlLiteral reads the string literal starting at s[i], if one does, and
// returns the span of its contents.
func sqlLiteral(s string, i int) (span, bool) {
	if i >= len(s) {
		return span{}, false
	}
	switch c := fold(s[i]); {
	case c == '\'':
		return quoted(s, i+1, false), true
	case (c == 'e' || c == 'n') && i+1 < len(s) && s[i+1] == '\'':
		return quoted(s, i+2, c == 'e'), true
	case c == 'u' && strings.HasPrefix(s[i+1:], "&'"):
		return quoted(s, i+3, false), true
	case c == '$':
		j := i + 1
		for j < len(s) && s[j] != '$' && isIdentByte(s[j]) {
			j++
		}
		if j >= len(s) || s[j] != '$' || j > i+1 && '0' <= s[i+1] && s[i+1] <= '9' {
			return span{}, false // $1, a parameter, or no tag
		}
		tag := s[i : j+1]
		end := strings.Index(s[j+1:], tag)
		if end < 0 {
			return span{j + 1, len(s)}, true
		}
		return span{j + 1, j + 1 + end}, true
	}
	return span{}, false
}

// quoted reads a '...' literal's contents from s[i], doubled quotes (and
// backslash escapes, for E'...') inside.
func quoted(s string, i int, escapes bool) span {
	for j := i; j < len(s); j++ {
		switch {
		case escapes && s[j] == '\\':
			j++
		case s[j] == '\'' && j+1 < len(s) && s[j+1] == '\'':
			j++
		case s[j] == '\'':
			return span{i, j}
		}
	}
	return span{i, len(s)}
}

// HasSQLPassword reports whether SQL text sets a password, in any quoting
// (CREATE ROLE, ALTER ROLE, a user mapping): a server that keeps statement
// texts (pg_stat_statements, its log) would keep the password.
func HasSQLPassword(sql string) bool {
	for _, sp := range sqlPasswords(sql) {
		if sp.hi > sp.lo {
			return true
		}
	}
	return false
}

// sqlUnescape reads a literal's contents as the server does, near enough
// for a secret to be found as written either way.
var sqlUnescape = strings.NewReplacer("''", "'", `\'`, "'", `\\`, `\`)

// maskSQL masks the password literals of SQL text and returns what they
// held.
func maskSQL(s string) (string, []string) {
	spans := sqlPasswords(s)
	if len(spans) == 0 {
		return s, nil
	}
	var b strings.Builder
	var found []string
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.lo])
		if sp.hi > sp.lo {
			b.WriteString(Mask)
			raw := s[sp.lo:sp.hi]
			found = append(found, raw, sqlUnescape.Replace(raw))
		}
		at = sp.hi
	}
	b.WriteString(s[at:])
	return b.String(), found
}
