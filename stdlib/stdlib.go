// Package stdlib embeds the Starlark library that notebooks load with
// load("@std/NAME.star", ...): experiment designs written on the builtins.
package stdlib

import "embed"

// FS holds every stdlib module, by file name.
//
//go:embed *.star
var FS embed.FS
