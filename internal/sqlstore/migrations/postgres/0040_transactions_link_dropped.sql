-- paylink: rolling-upgrade
-- A database migrated by a build whose 0018 was the earlier one (before
-- c134606 renamed and changed it) still has transactions_link, which the
-- 0018 on main drops: one index write a transaction that no query reads.
-- Drop it, so that every database has the schema of a fresh one.
DROP INDEX IF EXISTS transactions_link;
