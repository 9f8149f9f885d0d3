-- The double-entry journal (docs/ledger.md). Postings and their lines are
-- append-only: a trigger refuses every UPDATE and DELETE. posting_key names
-- the event that caused a posting, so nothing is ever posted twice.
CREATE TABLE ledger_postings (
    id               TEXT PRIMARY KEY,
    posting_key      TEXT NOT NULL UNIQUE,
    kind             TEXT NOT NULL,
    merchant_id      TEXT NOT NULL REFERENCES merchants(id),
    currency         TEXT NOT NULL,
    reference        TEXT NOT NULL,
    refund_reference TEXT NOT NULL DEFAULT '',
    amount           BIGINT NOT NULL,
    fee              BIGINT NOT NULL,
    net              BIGINT NOT NULL,
    moves_balance    BOOLEAN NOT NULL,
    created_at       BIGINT NOT NULL
);
-- Balance transactions of a merchant, newest first (ids are time-ordered).
CREATE INDEX ledger_postings_balance ON ledger_postings(merchant_id, moves_balance, id);
CREATE INDEX ledger_postings_reference ON ledger_postings(reference);

CREATE TABLE ledger_lines (
    posting_id  TEXT NOT NULL REFERENCES ledger_postings(id),
    line_no     INTEGER NOT NULL,
    merchant_id TEXT NOT NULL,
    account     TEXT NOT NULL,
    currency    TEXT NOT NULL,
    amount      BIGINT NOT NULL,
    fee_code    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (posting_id, line_no)
);
CREATE INDEX ledger_lines_balance ON ledger_lines(merchant_id, account, currency);

CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger rows are append-only';
END $$;
CREATE TRIGGER ledger_postings_append_only BEFORE UPDATE OR DELETE ON ledger_postings
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_lines_append_only BEFORE UPDATE OR DELETE ON ledger_lines
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

-- Settlement: a batch covers balance transactions (each at most once, by
-- the primary key of settlement_items); a payout covers batches (each at
-- most once, by the primary key of payout_batches).
CREATE TABLE settlement_batches (
    id          TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    currency    TEXT NOT NULL,
    day         TEXT NOT NULL,
    count       INTEGER NOT NULL,
    net         BIGINT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX settlement_batches_day ON settlement_batches(merchant_id, day);

CREATE TABLE settlement_items (
    posting_id TEXT PRIMARY KEY REFERENCES ledger_postings(id),
    batch_id   TEXT NOT NULL REFERENCES settlement_batches(id)
);
CREATE INDEX settlement_items_batch ON settlement_items(batch_id);

CREATE TABLE payouts (
    id          TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    currency    TEXT NOT NULL,
    amount      BIGINT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX payouts_merchant ON payouts(merchant_id, id);

CREATE TABLE payout_batches (
    batch_id  TEXT PRIMARY KEY REFERENCES settlement_batches(id),
    payout_id TEXT NOT NULL REFERENCES payouts(id)
);
CREATE INDEX payout_batches_payout ON payout_batches(payout_id);

-- Reconciliation runs of acquirer settlement files, and every variance
-- they found, kept for review.
CREATE TABLE reconciliations (
    id         TEXT PRIMARY KEY,
    file_name  TEXT NOT NULL,
    days       TEXT NOT NULL,
    matched    INTEGER NOT NULL,
    variances  INTEGER NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE reconciliation_variances (
    reconciliation_id TEXT NOT NULL REFERENCES reconciliations(id),
    seq               INTEGER NOT NULL,
    kind              TEXT NOT NULL,
    reference         TEXT NOT NULL,
    currency          TEXT NOT NULL,
    file_amount       BIGINT NOT NULL,
    ledger_amount     BIGINT NOT NULL,
    file_line         INTEGER NOT NULL,
    PRIMARY KEY (reconciliation_id, seq)
);
CREATE INDEX ledger_postings_created ON ledger_postings(created_at);
CREATE INDEX transactions_processed ON transactions(processed_at);
