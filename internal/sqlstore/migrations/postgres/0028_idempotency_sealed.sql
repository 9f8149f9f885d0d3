-- paylink: stop-every-instance: an older build replays an idempotency answer this one sealed as its raw ciphertext, with 200 and Content-Type JSON
-- An idempotency key's stored response is sealed by the vault from now
-- on: a response can hold a payment link's page addresses, a 3-D Secure
-- challenge address or a transaction token, which are otherwise stored
-- only hashed. response_key_id names the key it is sealed under ('' for
-- a response stored in clear before this migration; those expire within
-- IdempotencyRetention, 24 hours). Key rotation re-seals them.
ALTER TABLE idempotency_keys ADD COLUMN response_key_id TEXT NOT NULL DEFAULT '';
