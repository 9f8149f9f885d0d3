-- Idempotency keys: one row per (merchant, key), holding the first
-- request's hash and, once it finished, its response for replays.
CREATE TABLE idempotency_keys (
    merchant_id  TEXT NOT NULL REFERENCES merchants(id),
    key          TEXT NOT NULL,
    request_hash BLOB NOT NULL,
    status       INTEGER NOT NULL DEFAULT 0, -- HTTP status once finished, 0 while in progress
    response     BLOB,
    created_at   BIGINT NOT NULL,
    locked_until BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
