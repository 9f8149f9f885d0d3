-- Issue 14 (docs/performance.md): balances are summed over the
-- merchant's postings (ledger_postings_balance) joined to their lines by
-- the lines' primary key, so the lines' own balance index is one write
-- per line that no read needs.
DROP INDEX ledger_lines_balance;
