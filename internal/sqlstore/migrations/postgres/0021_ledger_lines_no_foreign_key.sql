-- Issue 14 (docs/performance.md, "PostgreSQL"): a ledger line no longer
-- carries a foreign key to its posting. PostgreSQL checks one by locking
-- the referenced row (SELECT ... FOR KEY SHARE) once per line inserted,
-- which rewrites the posting's tuple and logs the lock: about a fifth of
-- the database's CPU per payment. Lines are only ever inserted together
-- with their posting, in the same transaction (AddPosting), and never
-- updated or deleted (triggers refuse it); `paylink ledger verify` reports
-- any line without its posting. SQLite keeps the key: its check is an
-- index look-up that writes nothing.
ALTER TABLE ledger_lines DROP CONSTRAINT ledger_lines_posting_id_fkey;
