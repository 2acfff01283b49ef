package runtime

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/limits"
)

// boundOutputs replaces each output nested or sized past the limits
// (runtime/limits) with a line saying why, before anything displays,
// encodes or hashes it, and returns the first such error naming the cell.
func boundOutputs(cell string, outputs []starlark.Value) error {
	var first error
	for i, out := range outputs {
		if err := limits.CheckValue(out); err != nil {
			err = fmt.Errorf("cell %s: output %d (%s): %w", cell, i+1, out.Type(), err)
			outputs[i] = Printed("not shown: " + err.Error())
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// boundValues fails on the first value a cell defines that is nested or
// sized past the limits: such a value would be encoded, hashed and shown.
func boundValues(cell string, names []string, values starlark.StringDict) error {
	for _, name := range names {
		v, ok := values[name]
		if !ok {
			continue
		}
		if err := limits.CheckValue(v); err != nil {
			return fmt.Errorf("cell %s: value %s (%s): %w", cell, name, v.Type(), err)
		}
	}
	return nil
}
