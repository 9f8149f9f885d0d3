-- Webhooks (issue 4): the transactional outbox of webhook deliveries and
-- the log of every delivery attempt. Times are unix microseconds (UTC).
CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    merchant_id      TEXT NOT NULL REFERENCES merchants(id),
    reference        TEXT NOT NULL,
    event_status     TEXT NOT NULL,
    target           TEXT NOT NULL,
    url              TEXT NOT NULL,
    payload          TEXT NOT NULL,
    state            TEXT NOT NULL,
    attempts         BIGINT NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    lease_token      TEXT NOT NULL DEFAULT '',
    lease_until      BIGINT,
    last_status_code BIGINT NOT NULL DEFAULT 0,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    delivered_at     BIGINT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);
CREATE INDEX webhook_deliveries_merchant ON webhook_deliveries(merchant_id, created_at);
CREATE INDEX webhook_deliveries_reference ON webhook_deliveries(reference);

CREATE TABLE webhook_attempts (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
    attempt     BIGINT NOT NULL,
    url         TEXT NOT NULL,
    status_code BIGINT NOT NULL,
    latency_us  BIGINT NOT NULL,
    error       TEXT NOT NULL,
    started_at  BIGINT NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, id);
