-- The queries of held rows count pending rows alone: a delivered or
-- failed row can keep its hold mark (a binary older than 0032 finished
-- it during a rolling upgrade), and it is held for no one. A planner uses
-- a partial index only for a query whose WHERE implies the index's, and
-- with state in those queries both engines counted and listed the held
-- rows through webhook_deliveries_due, every pending row. The held rows'
-- index now holds pending held rows alone (TestQueriesUsePartialIndexes).
-- Like 0032 it is built inside the migration's transaction, reading
-- every delivery: writes to the outbox wait for it (docs/operations.md).
DROP INDEX webhook_deliveries_held;
CREATE INDEX webhook_deliveries_held ON webhook_deliveries(held_for) WHERE state = 'pending' AND held_for <> '';
