-- Dashboard users are written by compare-and-set (docs/dashboard.md,
-- "Concurrent changes"): every write of a user checks that the stored
-- row is still at the version the writer read, and moves it to the next.
-- A request that read a user before another request changed it (a
-- password change, a demotion, a spent recovery code) can then never
-- write its stale copy back over that change.
ALTER TABLE users ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
-- The time step (unix seconds / 30) of the last TOTP code accepted for
-- the user: a code is accepted once (RFC 6238, section 5.2).
ALTER TABLE users ADD COLUMN totp_last_step BIGINT NOT NULL DEFAULT 0;
