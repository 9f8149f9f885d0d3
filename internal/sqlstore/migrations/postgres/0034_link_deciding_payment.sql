-- paylink: rolling-upgrade
-- A payment link's payment is found by the link's merchantReference
-- (spec 4.16.3: a merchant whose webhook is missing polls the status by
-- it), even when staff typed another invoice number in the virtual
-- terminal: the status look-up by an order reference also reads the
-- payment that decides the link changed last among those with that
-- merchant reference, paid or claimed by an attempt, through this index
-- of such links alone, one row read (TestQueriesUsePartialIndexes).
CREATE INDEX payment_links_deciding ON payment_links(merchant_id, merchant_reference, updated_at, id)
    WHERE paid_reference <> '' OR claim_reference <> '';
