-- The recovery job looks refunds up by status and age.
CREATE INDEX refunds_status ON refunds(status, created_at);
