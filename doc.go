// Package paylink is the domain of the paylink payment service: money
// and cards, transactions and their state machine, payment links,
// refunds, direct debits, webhooks, the ledger, dashboard users, and the
// Service, which holds every business rule.
//
// The Service reaches the world through ports declared here (Store and
// Tx, Processor, BankProcessor); their implementations live under
// internal/ (sqlstore, processor), as do the HTTP surfaces that call the
// Service (api, checkout, dashboard). docs/design.md maps each file to
// the rule it holds.
package paylink
