//go:build !race

package allocstest

// Race is whether the program was built with the race detector.
const Race = false
