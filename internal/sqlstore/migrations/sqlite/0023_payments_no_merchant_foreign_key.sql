-- Issue 14: on PostgreSQL, transactions and ledger postings lose their
-- foreign key to their merchant (see that engine's 0023). SQLite keeps
-- them, as its check is an index look-up that writes nothing: nothing
-- changes here. The migration exists so that both engines stay at the
-- same schema version.
SELECT 1;
