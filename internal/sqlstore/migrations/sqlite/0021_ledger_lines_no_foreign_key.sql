-- Issue 14: on PostgreSQL, ledger lines lose their foreign key to their
-- posting (see that engine's 0021). SQLite keeps it, as its check is an
-- index look-up that writes nothing: nothing changes here. The migration
-- exists so that both engines stay at the same schema version.
SELECT 1;
