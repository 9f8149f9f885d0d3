-- paylink: rolling-upgrade
-- A merchant's variances are read newest run first by the run's id
-- (reconciliation_variances_merchant, 0038), and run ids are time-ordered
-- mixed-case base62: in time order byte by byte only. A cluster made with
-- a linguistic collation sorts "rc_...a" before "rc_...Z", so the newest
-- run could be listed after an older one, or cut off by the page's bound
-- (the verification sweep saw it). Both ids compare byte-wise whatever
-- the cluster's collation, as 0026 made the ledger's; the indexes on them
-- are rebuilt by the change. Older builds read the same values.
ALTER TABLE reconciliation_variances DROP CONSTRAINT reconciliation_variances_reconciliation_id_fkey;
ALTER TABLE reconciliations ALTER COLUMN id TYPE TEXT COLLATE "C";
ALTER TABLE reconciliation_variances ALTER COLUMN reconciliation_id TYPE TEXT COLLATE "C";
ALTER TABLE reconciliation_variances ADD CONSTRAINT reconciliation_variances_reconciliation_id_fkey
    FOREIGN KEY (reconciliation_id) REFERENCES reconciliations(id);
