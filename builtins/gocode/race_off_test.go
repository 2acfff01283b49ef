//go:build !race

package gocode

const raceDetector = false
