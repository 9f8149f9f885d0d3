-- paylink schema, version 1 (SQLite). Times are unix microseconds (UTC);
-- amounts are minor units of the row's currency.
CREATE TABLE merchants (
    id                 TEXT PRIMARY KEY,
    name               TEXT NOT NULL,
    trading_name       TEXT NOT NULL,
    country            TEXT NOT NULL,
    api_key_hash       BLOB NOT NULL UNIQUE,
    company_token_hash BLOB NOT NULL UNIQUE,
    settings           TEXT NOT NULL,
    created_at         BIGINT NOT NULL
);

CREATE TABLE transaction_tokens (
    hash        BLOB PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);
CREATE INDEX transaction_tokens_expires ON transaction_tokens(expires_at);

CREATE TABLE cards (
    token          TEXT PRIMARY KEY,
    merchant_id    TEXT NOT NULL REFERENCES merchants(id),
    key_id         TEXT NOT NULL,
    pan_sealed     BLOB NOT NULL,
    fingerprint    TEXT NOT NULL,
    info           TEXT NOT NULL,
    multi_use      BOOLEAN NOT NULL,
    customer_id    TEXT NOT NULL DEFAULT '',
    created_at     BIGINT NOT NULL,
    used_at        BIGINT,
    invalidated_at BIGINT
);

CREATE TABLE transactions (
    reference       TEXT PRIMARY KEY,
    merchant_id     TEXT NOT NULL REFERENCES merchants(id),
    invoice_number  TEXT NOT NULL DEFAULT '',
    payment_type    TEXT NOT NULL,
    channel         TEXT NOT NULL,
    status          TEXT NOT NULL,
    version         BIGINT NOT NULL,
    currency        TEXT NOT NULL,
    amount          BIGINT NOT NULL,
    surcharge       BIGINT NOT NULL,
    fee             BIGINT NOT NULL,
    total           BIGINT NOT NULL,
    pre_auth        BOOLEAN NOT NULL,
    pre_auth_amount BIGINT NOT NULL,
    refunded        BIGINT NOT NULL,
    card_token      TEXT NOT NULL DEFAULT '',
    payment_link_id TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    processed_at    BIGINT,
    secret_key_id   TEXT NOT NULL DEFAULT '',
    secret_sealed   BLOB,
    details         TEXT NOT NULL
);
CREATE INDEX transactions_invoice ON transactions(merchant_id, invoice_number, created_at);
CREATE INDEX transactions_status ON transactions(status, updated_at);
CREATE INDEX transactions_link ON transactions(payment_link_id, created_at);

CREATE TABLE refunds (
    reference             TEXT PRIMARY KEY,
    merchant_id           TEXT NOT NULL REFERENCES merchants(id),
    transaction_reference TEXT NOT NULL REFERENCES transactions(reference),
    invoice_number        TEXT NOT NULL DEFAULT '',
    status                TEXT NOT NULL,
    currency              TEXT NOT NULL,
    amount                BIGINT NOT NULL,
    created_at            BIGINT NOT NULL,
    details               TEXT NOT NULL
);
CREATE INDEX refunds_invoice ON refunds(merchant_id, invoice_number, created_at);
CREATE INDEX refunds_transaction ON refunds(merchant_id, transaction_reference, created_at);

CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id TEXT NOT NULL,
    reference   TEXT NOT NULL,
    type        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX events_reference ON events(reference, id);
