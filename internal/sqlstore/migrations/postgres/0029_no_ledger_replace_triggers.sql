-- SQLite's 0029 drops two triggers a development build of 0028 created
-- there; PostgreSQL never had them. The migration exists so that both
-- engines stay at the same schema version.
SELECT 1;
