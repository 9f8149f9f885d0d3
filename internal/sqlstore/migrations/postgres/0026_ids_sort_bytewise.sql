-- Balance transactions and payouts are listed newest first by id, keyset
-- paginated by id (docs/ledger.md), and their ids are time-ordered
-- mixed-case base62: in time order byte by byte only. A cluster made
-- with a linguistic collation (en-US, ICU or libc) sorts "bt_a" before
-- "bt_B", so the lists came out of order there. The two ids compare
-- byte-wise whatever the cluster's collation; the indexes on them are
-- rebuilt by the change, the rows are not rewritten.
ALTER TABLE ledger_postings ALTER COLUMN id TYPE TEXT COLLATE "C";
ALTER TABLE payouts ALTER COLUMN id TYPE TEXT COLLATE "C";
