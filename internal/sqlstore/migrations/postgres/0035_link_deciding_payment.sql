-- paylink: rolling-upgrade
-- The status look-up by a link's merchantReference reads the payment
-- that decides the link changed last among those with that merchant
-- reference: its paid payment, or the attempt holding its claim (one
-- whose answer is awaited decides too: it must outrank the customer's
-- declined attempts). This index of paid or claimed links, in the order
-- of their change, replaces 0034's of paid links: the look-up reads one
-- row (TestQueriesUsePartialIndexes). A database migrated by the builds
-- that shipped this index as 0034 (79c1cc2 to 728dc44) has it already.
DROP INDEX IF EXISTS payment_links_paid;
CREATE INDEX IF NOT EXISTS payment_links_deciding ON payment_links(merchant_id, merchant_reference, updated_at, id)
    WHERE paid_reference <> '' OR claim_reference <> '';
