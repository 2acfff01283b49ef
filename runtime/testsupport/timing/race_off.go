//go:build !race

package timing

const race = false
