package build

// What build_test.go (package build_test, which may import backend.process
// as this package cannot) reads of the package's insides.
var (
	Git          = git
	GitInputHash = gitInputHash
)

// Info is the binary's record, comparable as a whole.
func (v *Binary) Info() binary { return v.b }
