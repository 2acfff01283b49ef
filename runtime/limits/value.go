package limits

import "errors"

// ErrTooDeep is wrapped by the error for a value nested past Depth (the
// engine's checkValue, and every walk of a value bounded by Depth).
var ErrTooDeep = errors.New("nested too deeply")
