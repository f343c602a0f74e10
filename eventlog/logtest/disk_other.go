//go:build !linux

package logtest

import "testing"

// SmallDisk mounts a tmpfs on Linux only: elsewhere it skips the test.
func SmallDisk(t testing.TB, dir string, size int) {
	t.Skip("a small tmpfs for a full disk is mounted on Linux only (as root)")
}

// FillDisk is not reached where SmallDisk skips.
func FillDisk(t testing.TB, dir string) (free func()) {
	t.Fatal("FillDisk needs SmallDisk, which runs on Linux only")
	return nil
}
