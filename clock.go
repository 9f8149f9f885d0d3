package paylink

import "time"

// ClockTolerance is how far an instance's clock may be from its
// database server's before paylink warns (serve's clock-offset-check job
// on PostgreSQL, the paylink_clock_offset_seconds gauge). Every instance
// is compared with the same database clock, so two instances each within
// ClockTolerance of it are within ClockSkewTolerance of each other.
const ClockTolerance = 2 * time.Second

// ClockSkewTolerance is the skew between two instances' clocks that
// every timing margin between instances must exceed, with room for a
// commit's delay: the webhook lease beyond its attempt timeout, recovery's
// threshold beyond the window a processor call must end in
// (ProcessingTimeout less CallWindow), SettlementGrace, the idempotency lock beyond
// MaxRequestTime. Instances apart by more are what the warning is for.
const ClockSkewTolerance = 2 * ClockTolerance
