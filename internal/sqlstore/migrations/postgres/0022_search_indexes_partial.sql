-- Issue 14 (docs/performance.md): fewer B-tree writes per payment.
--
-- The invoice, customer email and card last-four indexes serve look-ups
-- of a value someone typed or sent: nobody looks for an empty one. As
-- partial indexes they hold only non-empty values, so a payment without
-- an invoice number or customer email (most API purchases) writes no
-- entry to those two, and a direct debit none to the card's. The queries
-- repeat each WHERE clause (invoice_number <> '' and so on), which is how
-- SQLite and PostgreSQL know they may use the index.
--
-- The invoice index also ends with the reference: a look-up by invoice
-- number wants the newest payment (ORDER BY created_at DESC, reference
-- DESC LIMIT 1), and without the reference in the index both planners
-- preferred walking all of the merchant's payments newest first through
-- transactions_merchant_created, which ends the same way, to sorting
-- (TestQueriesUsePartialIndexes).
DROP INDEX transactions_invoice;
CREATE INDEX transactions_invoice ON transactions(merchant_id, invoice_number, created_at, reference)
    WHERE invoice_number <> '';
DROP INDEX transactions_customer_email;
CREATE INDEX transactions_customer_email ON transactions(merchant_id, customer_email, created_at)
    WHERE customer_email <> '';
DROP INDEX transactions_card_last4;
CREATE INDEX transactions_card_last4 ON transactions(merchant_id, card_last4, created_at)
    WHERE card_last4 <> '';
