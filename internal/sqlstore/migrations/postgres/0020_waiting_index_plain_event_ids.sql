-- Issue 14 (docs/performance.md): the status index only ever serves the
-- jobs that look for transactions still waiting for something
-- (TransactionsInStatus, CountInStatus). As a partial index it holds only
-- those statuses, so a payment that ends APPROVED, DECLINED or FAILED
-- writes no entry to it. The queries repeat this WHERE clause word for
-- word (sqlstore.waitingStatuses), which is how the planner knows it may
-- use the index. (Event ids need no change here: an identity column.)
DROP INDEX transactions_status;
CREATE INDEX transactions_waiting ON transactions(status, updated_at)
    WHERE status IN ('PENDING', 'PROCESSING', 'UNKNOWN', 'REQUIRES_AUTHENTICATION', 'PRE_AUTHORISED');
