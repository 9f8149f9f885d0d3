package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want Info
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v5.1.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}},
			Info{Version: "v5.1.0", Commit: "abc123", GoVersion: "go1.26.8"}},
		{"dirty checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}},
			Info{Version: "(devel)", Commit: "abc123+dirty", GoVersion: "go1.26.8"}},
		{"no vcs, no version", debug.BuildInfo{GoVersion: "go1.26.8"},
			Info{Version: "(devel)", GoVersion: "go1.26.8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fromBuildInfo(&tt.bi); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadNamesTheToolchain(t *testing.T) {
	if got := Read(); got.GoVersion == "" || got.Version == "" {
		t.Errorf("got %+v, want a Go version and a version", got)
	}
}
