// Package recoverytest holds the Service-level tests of processor
// deadlines, inquiries and the recovery job, run on SQLite and on
// PostgreSQL against the sandbox acquirer and bank made slow or silent.
package recoverytest
