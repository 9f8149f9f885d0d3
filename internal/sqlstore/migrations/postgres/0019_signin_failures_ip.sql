-- Issue 13: sign-in failures are also counted per source address, so a
-- client trying many emails from one address (credential stuffing) is
-- throttled as well as one email tried many times. Rows written before
-- this migration have no address ('') and count only for their email.
ALTER TABLE signin_failures ADD COLUMN ip TEXT NOT NULL DEFAULT '';
CREATE INDEX signin_failures_ip ON signin_failures(ip, at);
