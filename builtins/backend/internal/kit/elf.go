package kit

import (
	"debug/elf"
	"fmt"
	"strings"
)

// Interpreter is the dynamic loader an ELF executable names
// ("/lib64/ld-linux-x86-64.so.2"), "" for a statically linked one: an
// image without that loader (FROM scratch) cannot start it, and the engine
// says only "no such file or directory" (issue 52).
func Interpreter(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: not an executable this machine can read: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		buf := make([]byte, p.Filesz)
		if _, err := p.ReadAt(buf, 0); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return strings.TrimRight(string(buf), "\x00"), nil
	}
	return "", nil
}

// DynamicHint says why a dynamically linked program may not start in an
// image, and how to build one that does; "" for a static program (or one
// that cannot be read).
func DynamicHint(path string) string {
	interp, err := Interpreter(path)
	if err != nil || interp == "" {
		return ""
	}
	return fmt.Sprintf("%s is dynamically linked: it needs %s and the C libraries, which an image without them (FROM scratch) lacks; build(..., cgo = False) makes a static binary", path, interp)
}
