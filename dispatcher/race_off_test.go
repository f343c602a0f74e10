//go:build !race

package dispatcher

const raceEnabled = false
