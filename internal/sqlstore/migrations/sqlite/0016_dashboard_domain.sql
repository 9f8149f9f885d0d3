-- The merchant dashboard's domain (issue 13). Times are unix microseconds
-- (UTC). docs/operations.md lists what each index serves.

-- API keys: a merchant has one current key (merchants.api_key_hash) and,
-- after a roll with an overlap, previous keys that work until expires_at.
-- id is the non-secret key id of the audit log: 'key_' and the first 8
-- bytes of the hash in hex (paylink.APIKeyID).
CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants(id),
    hash        BLOB NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT
);
CREATE INDEX api_keys_merchant ON api_keys(merchant_id, created_at);
INSERT INTO api_keys (id, merchant_id, hash, created_at)
    SELECT 'key_' || lower(hex(substr(api_key_hash, 1, 8))), id, api_key_hash, created_at FROM merchants;

-- Payment search: the customer's email (lower case) and the card's last
-- four digits are copied out of details so that a search is an index
-- lookup; the list pages through a merchant's payments newest first.
ALTER TABLE transactions ADD COLUMN customer_email TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN card_last4 TEXT NOT NULL DEFAULT '';
UPDATE transactions SET
    customer_email = lower(trim(coalesce(json_extract(details, '$.customer.email'), ''))),
    card_last4 = substr(coalesce(json_extract(details, '$.card.masked'), ''), -4);
CREATE INDEX transactions_merchant_created ON transactions(merchant_id, created_at, reference);
CREATE INDEX transactions_customer_email ON transactions(merchant_id, customer_email, created_at);
CREATE INDEX transactions_card_last4 ON transactions(merchant_id, card_last4, created_at);

-- The payment timeline: audit rows about a payment or its refunds.
CREATE INDEX audit_log_object ON audit_log(merchant_id, object_id, id);

-- The merchant's webhook delivery log (all, or failed only) and a
-- payment's deliveries, newest first (created time, then id), with a
-- bounded excerpt of each attempt's response body. The first index
-- replaces webhook_deliveries_merchant, of which it is an extension.
DROP INDEX webhook_deliveries_merchant;
CREATE INDEX webhook_deliveries_merchant_created ON webhook_deliveries(merchant_id, created_at, id);
CREATE INDEX webhook_deliveries_merchant_state ON webhook_deliveries(merchant_id, state, created_at, id);
CREATE INDEX webhook_deliveries_merchant_reference ON webhook_deliveries(merchant_id, reference, created_at, id);
ALTER TABLE webhook_attempts ADD COLUMN response_excerpt TEXT NOT NULL DEFAULT '';

-- The operator's list of reconciliation runs, newest first.
CREATE INDEX reconciliations_created ON reconciliations(created_at, id);
