-- paylink: rolling-upgrade
-- The readiness check's write: one row, rewritten by GET /readyz when no
-- write has committed lately, so that a database that answers reads but
-- cannot commit (a full disk, a read-only file or standby, a write lock
-- held elsewhere) makes the instance not ready. Older builds never read
-- or write it.
CREATE TABLE readiness_probe (
    id INTEGER PRIMARY KEY,
    probed_at BIGINT NOT NULL
);
