package startest

import (
	"os"
	"regexp"
	"strconv"
	"strings"
)

// A chunk is one program of a test file: the text between "---" lines,
// padded with newlines so its line numbers are the file's.
type chunk struct {
	file string
	src  string
	want map[int]*regexp.Regexp // line -> the error expected there
}

// reporter is what a chunk reports to: *testing.T, or a recorder in the
// harness's own tests.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// readChunks splits file into chunks and reads their expectations: the Go
// string literal after "###" on a line is a regexp that the error raised
// on that line must match.
func readChunks(r reporter, file string) []chunk {
	r.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		r.Errorf("%v", err)
		return nil
	}
	return splitChunks(r, file, string(data))
}

// splitChunks splits the text of file into chunks.
func splitChunks(r reporter, file, data string) []chunk {
	r.Helper()
	var chunks []chunk
	line := 1
	for _, text := range strings.Split(data, "\n---\n") {
		c := chunk{file: file, src: strings.Repeat("\n", line-1) + text, want: map[int]*regexp.Regexp{}}
		for _, l := range strings.Split(text, "\n") {
			if _, after, ok := strings.Cut(l, "###"); ok {
				c.expect(r, line, strings.TrimSpace(after))
			}
			line++
		}
		line++ // the "---" line
		chunks = append(chunks, c)
	}
	return chunks
}

func (c *chunk) expect(r reporter, line int, quoted string) {
	r.Helper()
	pattern, err := strconv.Unquote(quoted)
	if err != nil {
		r.Errorf("\n%s:%d: after ### want a quoted regexp, got %s", c.file, line, quoted)
		return
	}
	rx, err := regexp.Compile(pattern)
	if err != nil {
		r.Errorf("\n%s:%d: %v", c.file, line, err)
		return
	}
	c.want[line] = rx
}

// gotError matches an error raised on line with the expectation there.
// (Messages start on a new line, so the file:line leads a line of its own
// for editors, after the Go position testing adds.)
func (c *chunk) gotError(r reporter, line int, msg string) {
	r.Helper()
	rx, ok := c.want[line]
	if !ok {
		r.Errorf("\n%s:%d: unexpected error: %s", c.file, line, msg)
		return
	}
	delete(c.want, line)
	if !rx.MatchString(msg) {
		r.Errorf("\n%s:%d: error %q does not match %q", c.file, line, msg, rx)
	}
}

// done reports the expected errors that never came.
func (c *chunk) done(r reporter) {
	r.Helper()
	for line, rx := range c.want {
		r.Errorf("\n%s:%d: expected an error matching %q", c.file, line, rx)
	}
}
