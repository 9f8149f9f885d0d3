-- The transaction whose attempt holds a payment link's claim (issue 10):
-- completing a 3-D Secure attempt re-checks that this attempt still holds
-- its link, and a claim is released only by its own attempt. Empty when
-- the link is free (and for claims taken before this column existed,
-- which no attempt can then complete: they lapse with their timeout).
ALTER TABLE payment_links ADD COLUMN claim_reference TEXT NOT NULL DEFAULT '';
