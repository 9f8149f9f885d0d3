-- A pending delivery whose receiver hangs (an attempt to it timed out and
-- it has not answered since) is held: held_for names the receiver (its
-- URL's host and port) and next_attempt_at is far off, so the claim does
-- not lease it again and again while the receiver hangs. When the
-- receiver answers a probe, its held rows are made due in batches,
-- through webhook_deliveries_held; a row that is not held has '' and no
-- entry there, so inserting and finishing deliveries write no more index
-- entries than before (docs/webhooks.md, "A hanging receiver").
ALTER TABLE webhook_deliveries ADD COLUMN held_for TEXT NOT NULL DEFAULT '';
CREATE INDEX webhook_deliveries_held ON webhook_deliveries(held_for) WHERE held_for <> '';
