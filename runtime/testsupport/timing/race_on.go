//go:build race

package timing

const race = true
