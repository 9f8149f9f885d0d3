-- Issue 14 (docs/performance.md): fewer B-tree writes per payment.
--
-- The status index only ever serves the jobs that look for transactions
-- still waiting for something (TransactionsInStatus, CountInStatus):
-- PENDING, PROCESSING, UNKNOWN, REQUIRES_AUTHENTICATION and PRE_AUTHORISED.
-- As a partial index it holds only those, so a payment that ends APPROVED,
-- DECLINED or FAILED writes no entry to it. The queries repeat this WHERE
-- clause word for word (sqlstore.waitingStatuses), which is how SQLite and
-- PostgreSQL know they may use the index.
DROP INDEX transactions_status;
CREATE INDEX transactions_waiting ON transactions(status, updated_at)
    WHERE status IN ('PENDING', 'PROCESSING', 'UNKNOWN', 'REQUIRES_AUTHENTICATION', 'PRE_AUTHORISED');

-- Event ids were AUTOINCREMENT, which also rewrites a row of
-- sqlite_sequence on every insert. Events are never deleted, so a plain
-- INTEGER PRIMARY KEY (the largest id plus one) gives the same ids, in the
-- same order, without that write. No table refers to events.
CREATE TABLE events_plain (
    id          INTEGER PRIMARY KEY,
    merchant_id TEXT NOT NULL,
    reference   TEXT NOT NULL,
    type        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
INSERT INTO events_plain (id, merchant_id, reference, type, data, created_at)
    SELECT id, merchant_id, reference, type, data, created_at FROM events;
DROP TABLE events;
ALTER TABLE events_plain RENAME TO events;
CREATE INDEX events_reference ON events(reference, id);
