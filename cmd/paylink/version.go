package main

import (
	"fmt"

	"github.com/paylink/paylink/internal/buildinfo"
)

// runVersion prints the version, commit and Go version of this binary,
// from the build information the Go toolchain records.
func runVersion(env environment, args []string) error {
	f := newFlags("version", env)
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	info := buildinfo.Read()
	commit := info.Commit
	if commit == "" {
		commit = "unknown"
	}
	fmt.Fprintf(env.stdout, "paylink %s\ncommit %s\n%s\n", info.Version, commit, info.GoVersion)
	return nil
}
