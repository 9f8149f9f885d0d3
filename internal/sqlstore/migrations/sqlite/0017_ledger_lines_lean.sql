-- Issue 14 (docs/performance.md): a ledger line is written into one
-- B-tree instead of three. The table is keyed by (posting_id, line_no)
-- WITHOUT ROWID, so its primary key is the table, and the balance index
-- goes: balances are summed over the merchant's postings
-- (ledger_postings_balance) joined to their lines by this key.
CREATE TABLE ledger_lines_lean (
    posting_id  TEXT NOT NULL REFERENCES ledger_postings(id),
    line_no     INTEGER NOT NULL,
    merchant_id TEXT NOT NULL,
    account     TEXT NOT NULL,
    currency    TEXT NOT NULL,
    amount      INTEGER NOT NULL,
    fee_code    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (posting_id, line_no)
) WITHOUT ROWID;
INSERT INTO ledger_lines_lean (posting_id, line_no, merchant_id, account, currency, amount, fee_code)
    SELECT posting_id, line_no, merchant_id, account, currency, amount, fee_code FROM ledger_lines;
-- Dropping the table drops its index and its append-only triggers
-- (DROP TABLE fires no DELETE trigger); both triggers are made again.
DROP TABLE ledger_lines;
ALTER TABLE ledger_lines_lean RENAME TO ledger_lines;

CREATE TRIGGER ledger_lines_append_only_update BEFORE UPDATE ON ledger_lines
BEGIN SELECT RAISE(ABORT, 'ledger lines are append-only'); END;
CREATE TRIGGER ledger_lines_append_only_delete BEFORE DELETE ON ledger_lines
BEGIN SELECT RAISE(ABORT, 'ledger lines are append-only'); END;
