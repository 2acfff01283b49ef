package codec

import (
	"maps"
	"sync"

	"go.starlark.net/starlark"
)

// What packages not yet turned into a runtime.Module register from init.
// It goes with the last of them.

var (
	legacyMu sync.Mutex
	legacy   = Types{}
)

// Register adds a decoder to the legacy types.
func Register(typeName string, decode func([]byte) (starlark.Value, error)) {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	legacy[typeName] = func(data []byte, _ Types) (starlark.Value, error) { return decode(data) }
}

// Registered returns the legacy types.
func Registered() Types {
	legacyMu.Lock()
	defer legacyMu.Unlock()
	return maps.Clone(legacy)
}
