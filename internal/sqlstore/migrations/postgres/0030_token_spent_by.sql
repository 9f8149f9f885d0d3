-- A spent transaction token names the operation that spent it (its
-- purchase, refund or debit reference, or the hold's for a capture or
-- cancel). When the database's answer to a commit is lost, the Service
-- asks whether the token was spent by the operation it was committing,
-- which tells whether the commit happened; and a token spent already is
-- refused naming the operation that spent it, so that a client looks that
-- one up instead of paying again. Tokens spent before this migration name
-- none ('').
ALTER TABLE spent_transaction_tokens ADD COLUMN spent_by TEXT NOT NULL DEFAULT '';
