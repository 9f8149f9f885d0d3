package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/paylink/paylink"
)

// runUser runs the dashboard user commands.
func runUser(ctx context.Context, env environment, args []string) error {
	return runSubcommand(ctx, env, "user", []subcommand{
		{"create", "add a dashboard user to a merchant (password read from stdin)", runUserCreate},
	}, args)
}

// runUserCreate runs `paylink user create`: it adds a dashboard user to a
// merchant. The password is read from the first line of standard input
// (never a flag, which would leave it in shell history and ps output).
func runUserCreate(ctx context.Context, env environment, args []string) error {
	f := newFlags("user create", env)
	dsn := f.str("db", defaultDB, "database: a SQLite file path, sqlite:PATH, or postgres://...")
	mid := f.String("merchant", "", "mid of the merchant, as printed by merchant create (required)")
	email := f.String("email", "", "the user's email address, used to sign in (required)")
	role := f.String("role", "admin", "admin, staff or viewer")
	stdin := f.Bool("password-stdin", false, "read the password from the first line of standard input (required)")
	if err := f.parse(args); err != nil {
		return ignoreHelp(err)
	}
	if *mid == "" || *email == "" || !*stdin {
		return errors.New("user create needs --merchant, --email and --password-stdin")
	}
	password, err := readPassword(env)
	if err != nil {
		return err
	}
	return withService(ctx, env, *dsn, func(svc *paylink.Service) error {
		u, err := svc.CreateUser(ctx, paylink.NewUser{MerchantID: *mid, Email: *email, Role: paylink.Role(*role), Password: password})
		if err != nil {
			return fmt.Errorf("create user: %w", err)
		}
		fmt.Fprintf(env.stdout, "user %s created: %s, %s of merchant %s; sign in at /dashboard/login\n", u.ID, u.Email, u.Role, u.MerchantID)
		return nil
	})
}

// readPassword reads the first line of standard input, without its line
// ending.
func readPassword(env environment) (string, error) {
	line, err := bufio.NewReader(env.stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", errors.New("--password-stdin: no password on standard input")
	}
	return strings.TrimRight(line, "\r\n"), nil
}
