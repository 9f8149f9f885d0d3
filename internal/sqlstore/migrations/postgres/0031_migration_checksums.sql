-- Each applied migration records a SHA-256 of its file, so that a
-- migration edited after a database ran it (under the same name) is
-- reported by `paylink migrate` and serve's start-up warning, as one
-- renamed or renumbered already is. Migrations applied before this one
-- get the checksum of the running binary's file of the same name when it
-- first starts (Store.recordChecksums): what they ran is not known.
ALTER TABLE schema_migrations ADD COLUMN checksum TEXT;
