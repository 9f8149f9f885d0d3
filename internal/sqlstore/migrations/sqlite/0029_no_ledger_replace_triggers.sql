-- A development build of migration 0028 (ed133bd, a392458's parent) also
-- created triggers refusing INSERT OR REPLACE over ledger postings and
-- lines; 0028 was changed before release to leave them out (each cost
-- about 20 µs a purchase; `paylink ledger verify` reports a replaced
-- line instead). A database migrated by that build still has them: drop
-- them, so that every database has the schema of a fresh one.
DROP TRIGGER IF EXISTS ledger_postings_no_replace;
DROP TRIGGER IF EXISTS ledger_lines_no_replace;
