-- An idempotency key's stored response is sealed by the vault from now
-- on: a response can hold a payment link's page addresses, a 3-D Secure
-- challenge address or a transaction token, which are otherwise stored
-- only hashed. response_key_id names the key it is sealed under ('' for
-- a response stored in clear before this migration; those expire within
-- IdempotencyRetention, 24 hours). Key rotation re-seals them.
ALTER TABLE idempotency_keys ADD COLUMN response_key_id TEXT NOT NULL DEFAULT '';

-- The append-only tables refuse UPDATE and DELETE with triggers, but
-- SQLite's INSERT OR REPLACE deletes the row it replaces without firing
-- DELETE triggers (unless recursive_triggers is on), so a row could be
-- rewritten by inserting over its key. These refuse an insert of a key
-- already present. (A ledger posting's posting_key is left out: paylink
-- inserts postings with ON CONFLICT DO NOTHING on it, which a trigger
-- would turn into an error.)
CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
WHEN EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER ledger_postings_no_replace BEFORE INSERT ON ledger_postings
WHEN EXISTS (SELECT 1 FROM ledger_postings WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'ledger postings are append-only'); END;
CREATE TRIGGER ledger_lines_no_replace BEFORE INSERT ON ledger_lines
WHEN EXISTS (SELECT 1 FROM ledger_lines WHERE posting_id = NEW.posting_id AND line_no = NEW.line_no)
BEGIN SELECT RAISE(ABORT, 'ledger lines are append-only'); END;
