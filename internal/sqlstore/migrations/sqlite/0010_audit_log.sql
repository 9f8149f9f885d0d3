-- The audit log (PCI DSS 10.2): who did what to which object, from where,
-- with what outcome. Append-only: the triggers refuse every UPDATE and
-- DELETE, so not even a bug or a hand-written statement can rewrite it.
-- Removing old rows is an operator's retention decision, made by dropping
-- the triggers deliberately (docs/operations.md). Times are unix
-- microseconds (UTC).
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          BIGINT NOT NULL,
    merchant_id TEXT NOT NULL,
    actor_kind  TEXT NOT NULL,
    actor_id    TEXT NOT NULL,
    source_ip   TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    action      TEXT NOT NULL,
    object_type TEXT NOT NULL,
    object_id   TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    detail      TEXT NOT NULL
);
CREATE INDEX audit_log_at ON audit_log(at);
CREATE INDEX audit_log_merchant ON audit_log(merchant_id, at);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
