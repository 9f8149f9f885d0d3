package checkout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// Wallet is a digital wallet (Apple Pay, Google Pay) on the hosted page.
// The sandbox implementations simulate the wallet sheet; a real
// integration replaces Offer and Approve with the wallet's payment sheet
// and the decryption of its payment token into a device card.
type Wallet interface {
	Name() string        // shown on the button
	Path() string        // URL segment: /pay/{token}/wallet/{path}
	PaymentType() string // paylink.PaymentTypeApplePay or PaymentTypeGooglePay
	// Offer is the card the sheet presents for approval.
	Offer(now time.Time) paylink.CardDetails
	// Approve reads the customer's approval posted from the sheet and
	// returns the card to charge.
	Approve(r *http.Request, now time.Time) (*paylink.CardDetails, error)
}

// PayLater is a buy-now-pay-later provider (Zip): the customer approves
// the purchase on the provider's page, then paylink charges it.
type PayLater interface {
	Name() string
	PaymentType() string
	// Charge returns the charge of the approval posted from the
	// provider's page.
	Charge(r *http.Request) paylink.AltCharge
}

// walletList is the wallets in button order.
func (h *Handler) walletList() []Wallet {
	out := make([]Wallet, 0, len(h.wallets))
	for _, w := range h.wallets {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path() < out[j].Path() })
	return out
}

// sandboxWallet is a simulated wallet whose device card is a sandbox card
// that the sandbox processor approves.
type sandboxWallet struct {
	name, path, paymentType, number string
}

func (w sandboxWallet) Name() string        { return w.name }
func (w sandboxWallet) Path() string        { return w.path }
func (w sandboxWallet) PaymentType() string { return w.paymentType }

// Offer is the sandbox device card, valid for three more years.
func (w sandboxWallet) Offer(now time.Time) paylink.CardDetails {
	return paylink.CardDetails{Number: w.number, ExpiryMonth: 12, ExpiryYear: now.Year() + 3}
}

// Approve accepts the sheet's "Pay" button.
func (w sandboxWallet) Approve(r *http.Request, now time.Time) (*paylink.CardDetails, error) {
	c := w.Offer(now)
	c.HolderName = truncate(strings.TrimSpace(r.PostFormValue("first_name")+" "+r.PostFormValue("last_name")), paylink.MaxFieldLength)
	return &c, nil
}

// SandboxApplePay simulates Apple Pay with a Visa device card.
type SandboxApplePay struct{ sandboxWallet }

// SandboxGooglePay simulates Google Pay with a Mastercard device card.
type SandboxGooglePay struct{ sandboxWallet }

// NewSandboxApplePay returns the simulated Apple Pay.
func NewSandboxApplePay() SandboxApplePay {
	return SandboxApplePay{sandboxWallet{"Apple Pay", "applepay", paylink.PaymentTypeApplePay, "4242424242424242"}}
}

// NewSandboxGooglePay returns the simulated Google Pay.
func NewSandboxGooglePay() SandboxGooglePay {
	return SandboxGooglePay{sandboxWallet{"Google Pay", "googlepay", paylink.PaymentTypeGooglePay, "5555555555554444"}}
}

// SandboxZip simulates Zip: every approval on its page is charged.
type SandboxZip struct{}

// Name is shown on the button.
func (SandboxZip) Name() string { return "Zip" }

// PaymentType is paylink.PaymentTypeZip.
func (SandboxZip) PaymentType() string { return paylink.PaymentTypeZip }

// Charge approves the purchase with a Zip order id derived from the
// transaction reference.
func (SandboxZip) Charge(*http.Request) paylink.AltCharge {
	return func(_ context.Context, t *paylink.Transaction) (paylink.AuthResult, error) {
		h := sha256.Sum256([]byte("zip:" + t.Reference))
		return paylink.AuthResult{Outcome: paylink.OutcomeApproved, AuthCode: hex.EncodeToString(h[:3]),
			AcquirerTransID: "ZIP" + hex.EncodeToString(h[3:11]), AVSResult: "unchecked", CVVResult: "unchecked"}, nil
	}
}
