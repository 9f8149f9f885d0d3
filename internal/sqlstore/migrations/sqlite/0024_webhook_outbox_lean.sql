-- paylink: stop-every-instance: an older build claims webhooks by a state parameter, which cannot use the rebuilt partial index webhook_deliveries_due, so every claim reads every delivery ever made
-- Issue 14 (docs/performance.md, "A leaner webhook outbox"): fewer index
-- entries per webhook. Two indexes go and two become partial:
--   - webhook_deliveries_reference (reference) served no query: a
--     payment's deliveries are read through
--     webhook_deliveries_merchant_reference, which keeps its place;
--   - webhook_deliveries_merchant_state served one filter, a merchant's
--     failed deliveries: webhook_deliveries_failed holds those alone;
--   - webhook_deliveries_due holds pending rows alone, the only ones the
--     claim, the due count and the backlog read.
-- A delivery now writes four B-tree entries besides its row when
-- inserted (six before), and delivering it removes one (it removed two
-- and wrote two). The queries name the states as literals, which is how
-- the planner knows it may use a partial index
-- (TestQueriesUsePartialIndexes). PostgreSQL's 0024 also drops the
-- delivery's foreign key to its merchant; SQLite keeps it, as its check
-- is an index look-up that writes nothing.
DROP INDEX webhook_deliveries_reference;
DROP INDEX webhook_deliveries_merchant_state;
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries(merchant_id, created_at, id)
    WHERE state = 'failed';
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at)
    WHERE state = 'pending';
