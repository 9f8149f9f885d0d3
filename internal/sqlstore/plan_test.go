package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

// TestQueriesUsePartialIndexes: the queries that read a partial index do
// so on both engines. A planner only uses a partial index for a query
// that repeats its WHERE clause, so a drift between a migration (0020
// for transactions_waiting, 0022 for the search indexes, 0024 for the
// webhook outbox, 0032 and 0033 for held webhooks, 0035 for paid or claimed links) and its query would turn a job run, a status look-up by
// invoice number or a dashboard search into a scan of all transactions,
// and a webhook claim into a scan of every delivery ever made.
func TestQueriesUsePartialIndexes(t *testing.T) {
	search, searchArgs := sqlstore.SearchQuery(paylink.PaymentQuery{MerchantID: "M1", Search: "INV-1",
		SearchEmail: "inv-1", SearchLast4: "4242", Limit: 20})
	failed, failedArgs := sqlstore.DeliveriesQuery(paylink.WebhookFilter{MerchantID: "M1", FailedOnly: true})
	ofPayment, ofPaymentArgs := sqlstore.DeliveriesQuery(paylink.WebhookFilter{MerchantID: "M1", Reference: "pr_1"})
	type planCase struct {
		name    string
		query   string
		args    []any
		indexes []string
	}
	queries := []planCase{
		{"waiting", sqlstore.WaitingQuery, []any{"PROCESSING", int64(1), int64(0), "", 100}, []string{"transactions_waiting"}},
		{"newest by invoice", sqlstore.NewestByInvoiceQuery, []any{"M1", "INV-1"}, []string{"transactions_invoice"}},
		{"a refund by invoice number or purchase", sqlstore.RefundByInvoiceQuery, []any{"M1", "INV-1", "M1", "INV-1", "M1", "M1", "INV-1"},
			[]string{"refunds_invoice", "refunds_transaction", "transactions_invoice"}},
		{"a link's deciding payment", sqlstore.DecidingLinkPaymentQuery, []any{"M1", "ORDER-1"}, []string{"payment_links_deciding"}},
		{"dashboard search", search, searchArgs,
			[]string{"transactions_invoice", "transactions_customer_email", "transactions_card_last4"}},
		{"webhooks due", sqlstore.CountDueQuery, []any{int64(1)}, []string{"webhook_deliveries_due"}},
		{"webhook backlog", sqlstore.BacklogQuery, nil, []string{"webhook_deliveries_due", "webhook_deliveries_held"}},
		{"failed webhooks", failed, failedArgs, []string{"webhook_deliveries_failed"}},
		{"a payment's webhooks", ofPayment, ofPaymentArgs, []string{"webhook_deliveries_merchant_reference"}},
		{"release held webhooks", sqlstore.ReleaseHeldQuery, []any{int64(1), 500, "a.example"}, []string{"webhook_deliveries_held"}},
		{"probe a held webhook", sqlstore.ProbeHeldQuery, []any{int64(1), 1, "a.example"}, []string{"webhook_deliveries_held"}},
		{"receivers held for", sqlstore.HeldReceiversQuery, nil, []string{"webhook_deliveries_held"}},
		{"a merchant's variances", sqlstore.MerchantVariancesQuery, []any{"M1", 101}, []string{"reconciliation_variances_merchant"}},
	}
	ctx := context.Background()
	check := func(t *testing.T, q querier, explainPrefix string, postgres bool) {
		claim := planCase{"webhook claim", sqlstore.ClaimQuery(postgres), claimArgs, []string{"webhook_deliveries_due"}}
		for _, c := range append(queries, claim) {
			plan := explain(t, q, explainPrefix+c.query, c.args)
			for _, index := range c.indexes {
				if !strings.Contains(plan, index) {
					t.Errorf("%s: plan:\n%s\nwant it to use %s", c.name, plan, index)
				}
			}
		}
	}
	t.Run("SQLite", func(t *testing.T) {
		st, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		check(t, st.DB(), "EXPLAIN QUERY PLAN ", false)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		st, err := sqlstore.Open(ctx, pg.Database(t))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		conn, err := st.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// An empty table is cheapest to scan: ask for the plan an index
		// would give, as on a table of millions.
		if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		check(t, conn, "EXPLAIN ", true)
	})
}

// TestClaimLooksDeliveriesUpByKey: on SQLite, claiming webhook deliveries
// finds the due ones through webhook_deliveries_due and updates those by
// primary key. A claim that repeated its conditions outside the subquery
// walked every due delivery instead (docs/performance.md, "Claiming
// webhook deliveries"). PostgreSQL's query keeps them, and its planner
// looks the claimed rows up by key once the table has statistics.
func TestClaimLooksDeliveriesUpByKey(t *testing.T) {
	st, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plan := explain(t, st.DB(), "EXPLAIN QUERY PLAN "+sqlstore.ClaimQuery(false), claimArgs)
	const key = "sqlite_autoindex_webhook_deliveries_1 (id=?)"
	if !strings.Contains(plan, key) || !strings.Contains(plan, "webhook_deliveries_due") {
		t.Errorf("plan:\n%s\nwant the due index for the choice and %s for the update", plan, key)
	}
}

// TestFinishLooksDeliveriesUpByKey: on SQLite, finishing a batch of
// webhook deliveries (an UPDATE ... FROM a VALUES list) finds each row by
// primary key, not by walking the outbox, which grows with every payment.
func TestFinishLooksDeliveriesUpByKey(t *testing.T) {
	st, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var args []any
	for i := range 3 {
		args = append(args, fmt.Sprintf("msg_%d", i), "token", paylink.DeliveryDelivered, 1, int64(2), 200, "", int64(2), int64(2), "")
	}
	args = append(args, paylink.DeliveryPending)
	plan := explain(t, st.DB(), "EXPLAIN QUERY PLAN "+sqlstore.FinishQuery(3), args)
	const key = "SEARCH webhook_deliveries USING INDEX sqlite_autoindex_webhook_deliveries_1 (id=?)"
	if !strings.Contains(plan, key) || strings.Contains(plan, "SCAN webhook_deliveries") {
		t.Errorf("plan:\n%s\nwant each row found by %s", plan, key)
	}
}

// claimArgs are a claim's token, lease end, time and limit.
var claimArgs = []any{"token", int64(2), int64(1), 10}

// querier is a database or one of its connections.
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// explain runs an EXPLAIN and returns its rows as text, one per line.
func explain(t *testing.T, q querier, query string, args []any) string {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprint(&b, v, " ")
		}
		b.WriteString("\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
