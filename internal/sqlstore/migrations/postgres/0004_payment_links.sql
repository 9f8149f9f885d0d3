-- Payment links (issue 5). Times are unix microseconds (UTC), NULL when
-- unset; amounts are minor units. Page tokens are stored as SHA-256
-- hashes for lookup, and sealed by the vault to show the URLs again.
CREATE TABLE payment_links (
    id                 TEXT PRIMARY KEY,
    merchant_id        TEXT NOT NULL REFERENCES merchants(id),
    status             TEXT NOT NULL,
    version            BIGINT NOT NULL,
    amount             BIGINT NOT NULL,
    currency           TEXT NOT NULL,
    merchant_reference TEXT NOT NULL,
    apply_surcharge    BOOLEAN NOT NULL,
    customer           TEXT NOT NULL,
    webhook_url        TEXT NOT NULL DEFAULT '',
    page_token_hash    BYTEA NOT NULL UNIQUE,
    vt_token_hash      BYTEA NOT NULL UNIQUE,
    tokens_key_id      TEXT NOT NULL,
    tokens_sealed      BYTEA NOT NULL,
    csrf_secret        TEXT NOT NULL,
    attempts           BIGINT NOT NULL DEFAULT 0,
    window_start       BIGINT,
    window_attempts    BIGINT NOT NULL DEFAULT 0,
    claimed_at         BIGINT,
    paid_reference     TEXT NOT NULL DEFAULT '',
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    expires_at         BIGINT,
    paid_at            BIGINT,
    cancelled_at       BIGINT
);
CREATE INDEX payment_links_merchant ON payment_links(merchant_id, created_at);
