package main

import (
	"runtime/debug"
)

// version is the module version this binary was built from (v1.2.3 for go
// install …@v1.2.3, (devel) for a build in a clone), with the VCS revision
// when the build recorded one (a build in a clone), marked -dirty when the tree
// had changes.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return v + " (revision " + rev + ")"
}
