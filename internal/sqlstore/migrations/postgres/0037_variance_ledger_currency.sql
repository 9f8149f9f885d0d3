-- paylink: rolling-upgrade
-- The ledger's currency of a reconciliation variance. The currency
-- column is the file line's (the ledger's for missing_in_file, which has
-- no line), so a currency_differs variance lost the currency of its
-- ledger amount. Existing currency_differs rows get the currency of the
-- payment or refund they name, which is its posting's. Older builds
-- neither read nor write the column: a currency_differs variance one of
-- them stores during an upgrade has it empty and shows no ledger amount
-- (the other kinds need no ledger_currency to be read: see sidesOf).
ALTER TABLE reconciliation_variances ADD COLUMN ledger_currency TEXT NOT NULL DEFAULT '';
UPDATE reconciliation_variances SET ledger_currency = COALESCE(
    (SELECT t.currency FROM transactions t WHERE t.reference = reconciliation_variances.reference),
    (SELECT r.currency FROM refunds r WHERE r.reference = reconciliation_variances.reference),
    '')
WHERE kind = 'currency_differs';
