-- paylink: stop-every-instance: an older build claims webhooks by a state parameter, which cannot use the rebuilt partial index webhook_deliveries_due, so every claim reads every delivery ever made
-- Issue 14 (docs/performance.md, "A leaner webhook outbox"): fewer index
-- entries per webhook, and no lock on the merchant's row per payment.
--
-- Every payment of a merchant with webhooks inserts a delivery, and
-- finishing it changes its state, which PostgreSQL cannot do in place
-- while state is indexed: each finished delivery wrote a new entry in
-- every index of the table. Two indexes go and two become partial:
--   - webhook_deliveries_reference (reference) served no query: a
--     payment's deliveries are read through
--     webhook_deliveries_merchant_reference, which keeps its place;
--   - webhook_deliveries_merchant_state served one filter, a merchant's
--     failed deliveries: webhook_deliveries_failed holds those alone;
--   - webhook_deliveries_due holds pending rows alone, the only ones the
--     claim, the due count and the backlog read.
-- A delivery now writes four index entries when inserted (six before)
-- and three when it is delivered (six before). The queries name the
-- states as literals, which is how the planner knows it may use a
-- partial index (TestQueriesUsePartialIndexes).
--
-- Like transactions and postings (0023), a delivery no longer carries a
-- foreign key to its merchant: PostgreSQL checks one by share-locking
-- the merchant's row, the same row for every concurrent payment of that
-- merchant. Merchants are never deleted and paylink writes a delivery
-- only for the merchant whose payment it reports; a delivery whose
-- merchant is missing is recorded as failed when it is claimed instead of
-- stopping the outbox (Service.claimWebhooks). SQLite keeps the key: its
-- check is an index look-up that writes nothing.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_merchant_id_fkey;
DROP INDEX webhook_deliveries_reference;
DROP INDEX webhook_deliveries_merchant_state;
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries(merchant_id, created_at, id)
    WHERE state = 'failed';
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at)
    WHERE state = 'pending';
