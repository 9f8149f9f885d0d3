-- paylink: rolling-upgrade
-- A payment link's payment is found by the link's merchantReference
-- (spec 4.16.3: a merchant whose webhook is missing polls the status by
-- it), even when staff typed another invoice number in the virtual
-- terminal: the status look-up by invoice number also reads the paid
-- links with that merchant reference, through this index of paid links
-- alone (TestQueriesUsePartialIndexes).
CREATE INDEX payment_links_paid ON payment_links(merchant_id, merchant_reference) WHERE paid_reference <> '';
