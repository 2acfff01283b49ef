// Package stdlib embeds the Starlark library of experiment designs that
// notebooks load. A notebook loads it with load("@std/NAME.star", ...); its
// designs are written on the builtins.
package stdlib

import "embed"

// FS holds every stdlib module, by file name.
//
//go:embed *.star
var FS embed.FS
