-- paylink: stop-every-instance: an older build answers 500 to POST /v5/transaction_token, its tokens table being dropped
-- Issue 14 (docs/performance.md): transaction tokens are stateless (token.go):
-- issuing one writes nothing, and only spent tokens are stored, keyed by the
-- expiry they carry and their hash. The key is the table (WITHOUT ROWID): one
-- B-tree insert per spending, and the clean-up deletes a range of it.
-- Tokens issued before this upgrade (at most a token lifetime old) are
-- refused as not valid; clients obtain a new one for each operation.
DROP TABLE transaction_tokens;
CREATE TABLE spent_transaction_tokens (
    expires_at BIGINT NOT NULL,
    hash       BLOB NOT NULL,
    PRIMARY KEY (expires_at, hash)
) WITHOUT ROWID;

-- No query reads transactions by payment link through this index (a link's
-- payments are found by reference and invoice): it was one more B-tree
-- insert per transaction.
DROP INDEX transactions_link;
