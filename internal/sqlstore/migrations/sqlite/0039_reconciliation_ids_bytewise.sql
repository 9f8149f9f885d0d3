-- paylink: rolling-upgrade
-- On PostgreSQL, reconciliation run ids compare byte-wise whatever the
-- cluster's collation (see that engine's 0039). SQLite compares text
-- byte-wise (BINARY) already: nothing changes here. The migration exists
-- so that both engines stay at the same schema version.
SELECT 1;
