package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// subcommand is one subcommand of a command group (the create of
// merchant create): its name, one line on what it does, and how it runs.
type subcommand struct {
	name  string
	about string
	run   func(context.Context, environment, []string) error
}

// runSubcommand runs the subcommand of group that args[0] names, with the
// arguments after it. -h, --help or help prints the group's subcommands
// to standard output and succeeds, as "paylink <command> -h" promises; a
// missing or unknown subcommand prints them to standard error and is an
// error.
func runSubcommand(ctx context.Context, env environment, group string, subs []subcommand, args []string) error {
	if len(args) == 0 {
		printSubcommands(env.stderr, group, subs)
		return fmt.Errorf("%s: want a subcommand: %s", group, subcommandNames(subs))
	}
	if isHelp(args[0]) {
		printSubcommands(env.stdout, group, subs)
		return nil
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, env, args[1:])
		}
	}
	printSubcommands(env.stderr, group, subs)
	return fmt.Errorf("%s: unknown subcommand %q (want %s)", group, args[0], subcommandNames(subs))
}

// isHelp reports whether arg asks for help rather than naming a
// subcommand: what the flag package takes for help, and the word.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// printSubcommands writes group's subcommands to w, one a line with what
// it does.
func printSubcommands(w io.Writer, group string, subs []subcommand) {
	fmt.Fprintf(w, "usage: paylink %s <subcommand> [flags]\n\nsubcommands:\n", group)
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	for _, s := range subs {
		fmt.Fprintf(tw, "  %s\t%s\n", s.name, s.about)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nRun \"paylink %s <subcommand> -h\" for a subcommand's flags.\n", group)
}

// subcommandNames lists the names of subs for an error: "list or resend".
func subcommandNames(subs []subcommand) string {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
