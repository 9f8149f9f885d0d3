// Command paylink runs the paylink payment service and its operator tools.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	_ "time/tzdata" // IANA zones for customer.timezone on machines without them

	"github.com/paylink/paylink"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first SIGINT or SIGTERM asks for a clean stop (serve drains);
	// once it has, the signals take their default action again, so a
	// second one ends the process at once, as SIGKILL would.
	context.AfterFunc(ctx, stop)
	if err := runIO(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "paylink:", err)
		os.Exit(1)
	}
}

const usage = `usage: paylink <command> [flags]

commands:
  serve              run the HTTP service
  demo               run the service on the embedded default with a demo merchant
  migrate            apply database migrations
  merchant create    onboard a merchant and print its keys once
  merchant list      list merchants
  merchant update    change a merchant's webhook URL, whitelist, retries or payload
  merchant rotate-webhook-secret   give a merchant a new webhook signing secret
  merchant roll-api-key   give a merchant a new API key; the old one works for --overlap
  webhooks list      show the webhook delivery log
  webhooks resend    queue a webhook delivery again
  ledger verify      check that the journal balances and matches every payment
  settle             settle and pay out balance transactions before a cut-off
  report settlement  a merchant's settlement report of a day, CSV
  acquirer settlement-file   what the sandbox acquirer settled on a day, CSV
  reconcile          match an acquirer settlement file against the ledger
  keys rotate        re-encrypt stored secrets under the current master key
  audit export       print the audit log as JSON lines (--since 24h|RFC 3339)
  review             list payments and refunds whose outcome the processor has not confirmed (UNKNOWN)
  review resolve     record what the acquirer or bank told you about one of them
  version            print the version, commit and Go version of this binary
  user create        add a dashboard user to a merchant (password read from stdin)

Run "paylink <command> -h" for a command's flags. A flag whose help names
an environment variable can also be set from it: --db is PAYLINK_DB,
--addr is PAYLINK_ADDR, and so on. What names one item to act on
(--merchant, --reference, --answer) is read from the command line only.
`

// runIO is the whole program, with its environment and standard input
// (`user create --password-stdin`) passed in, for tests.
func runIO(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command")
	}
	env := environment{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	ctx = paylink.WithActor(ctx, paylink.Actor{Kind: paylink.ActorCLI, ID: commandName(args)})
	switch args[0] {
	case "serve":
		return runServe(ctx, env, args[1:])
	case "demo":
		return runDemo(ctx, env, args[1:])
	case "migrate":
		return runMigrate(ctx, env, args[1:])
	case "merchant":
		return runMerchant(ctx, env, args[1:])
	case "webhooks":
		return runWebhooks(ctx, env, args[1:])
	case "ledger":
		return runLedger(ctx, env, args[1:])
	case "settle":
		return runSettle(ctx, env, args[1:])
	case "report":
		return runReport(ctx, env, args[1:])
	case "acquirer":
		return runAcquirer(ctx, env, args[1:])
	case "reconcile":
		return runReconcile(ctx, env, args[1:])
	case "keys":
		return runKeys(ctx, env, args[1:])
	case "audit":
		return runAudit(ctx, env, args[1:])
	case "review":
		return runReview(ctx, env, args[1:])
	case "version":
		return runVersion(env, args[1:])
	case "user":
		return runUser(ctx, env, args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// commandName is the command and subcommand of args ("merchant create"),
// the CLI actor's id in the audit log.
func commandName(args []string) string {
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		return args[0] + " " + args[1]
	}
	return args[0]
}

// environment is what a subcommand may touch of the outside world.
type environment struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}
