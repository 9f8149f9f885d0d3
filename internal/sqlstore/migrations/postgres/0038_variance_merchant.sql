-- paylink: rolling-upgrade
-- The merchant of a reconciliation variance: the merchant of the payment
-- or refund its reference names, '' when it names none (a line of an
-- unknown reference), so that a merchant's dashboard reads its newest
-- variances by this index, a bounded read, instead of every variance of
-- the latest runs with a look-up per reference. Existing rows get the
-- merchant of the payment or refund they name. Older builds neither read
-- nor write the column: a variance one of them stores during an upgrade
-- has it empty and shows on no merchant's dashboard.
ALTER TABLE reconciliation_variances ADD COLUMN merchant_id TEXT NOT NULL DEFAULT '';
UPDATE reconciliation_variances SET merchant_id = COALESCE(
    (SELECT t.merchant_id FROM transactions t WHERE t.reference = reconciliation_variances.reference),
    (SELECT r.merchant_id FROM refunds r WHERE r.reference = reconciliation_variances.reference),
    '');
CREATE INDEX reconciliation_variances_merchant
    ON reconciliation_variances(merchant_id, reconciliation_id DESC, seq);
