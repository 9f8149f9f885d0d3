-- Issue 14 (docs/performance.md, "Payments and postings without a
-- foreign key to their merchant"): a transaction and a ledger posting no
-- longer carry a foreign key to their merchant. PostgreSQL checks one by
-- share-locking the merchant's row (SELECT ... FOR KEY SHARE through a
-- trigger), and every concurrent payment of a merchant locks that same
-- row: about a tenth of the database's CPU per purchase. Merchants are
-- never deleted, paylink writes these rows only with the authenticated
-- merchant's id, and `paylink ledger verify` reports any transaction or
-- posting naming a merchant that does not exist. SQLite keeps the keys:
-- its check is an index look-up that writes nothing.
ALTER TABLE transactions DROP CONSTRAINT transactions_merchant_id_fkey;
ALTER TABLE ledger_postings DROP CONSTRAINT ledger_postings_merchant_id_fkey;
