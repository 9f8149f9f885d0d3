// Package buildinfo reports which build is running, from the information
// the Go toolchain records in every binary (runtime/debug), so that
// `paylink version` and /healthz need no version stamped by hand.
package buildinfo

import (
	"runtime/debug"
)

// Info identifies a build.
type Info struct {
	Version   string // module version, "(devel)" for a build from a checkout
	Commit    string // VCS revision, with "+dirty" for uncommitted changes; "" when unknown
	GoVersion string // toolchain that built it
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "unknown"}
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo extracts Info; separate from Read so that tests can feed
// it any build information.
func fromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && info.Commit != "" {
		info.Commit += "+dirty"
	}
	return info
}
