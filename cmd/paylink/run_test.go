package main

import (
	"context"
	"io"
	"strings"
)

// run is runIO reading nothing from standard input.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runIO(ctx, args, getenv, strings.NewReader(""), stdout, stderr)
}
