-- Card fingerprints are scoped per merchant and made under a master key;
-- fingerprint_key_id names that key. Rows from before are '' and are
-- recomputed by `paylink keys rotate`.
ALTER TABLE cards ADD COLUMN fingerprint_key_id TEXT NOT NULL DEFAULT '';
