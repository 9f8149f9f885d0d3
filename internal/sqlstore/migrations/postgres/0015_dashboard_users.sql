-- Dashboard staff users, their sessions, invites and sign-in failures
-- (user.go). Secrets are stored only as SHA-256 hashes (session ids,
-- invite tokens, recovery codes) or sealed by the vault (TOTP secrets);
-- passwords only as argon2id hashes. Times are unix microseconds (UTC).
CREATE TABLE users (
    id             TEXT PRIMARY KEY,
    merchant_id    TEXT NOT NULL REFERENCES merchants(id),
    email          TEXT NOT NULL UNIQUE,
    role           TEXT NOT NULL,
    password_hash  TEXT NOT NULL,
    totp_key_id    TEXT NOT NULL DEFAULT '',
    totp_sealed    BYTEA,
    totp_enabled   BOOLEAN NOT NULL DEFAULT FALSE,
    recovery_codes TEXT NOT NULL DEFAULT '[]',
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
CREATE INDEX users_merchant ON users(merchant_id, email);

CREATE TABLE user_sessions (
    id_hash      BYTEA PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id),
    merchant_id  TEXT NOT NULL,
    csrf         TEXT NOT NULL,
    pending_totp BOOLEAN NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX user_sessions_user ON user_sessions(user_id);

CREATE TABLE user_invites (
    token_hash  BYTEA PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    email       TEXT NOT NULL,
    role        TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);

CREATE TABLE signin_failures (
    id    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email TEXT NOT NULL,
    at    BIGINT NOT NULL
);
CREATE INDEX signin_failures_email ON signin_failures(email, at);

-- The dashboard's home sums a merchant's recent transactions by day with
-- the index transactions_merchant_created (merchant_id, created_at,
-- reference) of migration 0016.
