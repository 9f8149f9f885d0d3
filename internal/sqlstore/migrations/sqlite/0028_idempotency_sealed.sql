-- paylink: stop-every-instance: an older build replays an idempotency answer this one sealed as its raw ciphertext, with 200 and Content-Type JSON
-- An idempotency key's stored response is sealed by the vault from now
-- on: a response can hold a payment link's page addresses, a 3-D Secure
-- challenge address or a transaction token, which are otherwise stored
-- only hashed. response_key_id names the key it is sealed under ('' for
-- a response stored in clear before this migration; those expire within
-- IdempotencyRetention, 24 hours). Key rotation re-seals them.
ALTER TABLE idempotency_keys ADD COLUMN response_key_id TEXT NOT NULL DEFAULT '';

-- The audit log refuses UPDATE and DELETE with triggers, but SQLite's
-- INSERT OR REPLACE deletes the row it replaces without firing DELETE
-- triggers (unless recursive_triggers is on), so a row could be
-- rewritten by inserting over its id. This refuses an insert of an id
-- already present. (The ledger's tables have no such trigger: one on
-- every posting and line costs about 20 µs a purchase, and `paylink
-- ledger verify` reports a rewritten posting or line; docs/ledger.md.)
CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
WHEN EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
