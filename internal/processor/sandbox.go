// Package processor holds paylink's acquirer implementations. Sandbox is
// deterministic: the card number decides the outcome, so tests and
// integrators can produce every path on purpose.
package processor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/paylink/paylink"
)

// Sandbox is the deterministic test acquirer. It remembers what it did,
// so that Inquire answers truthfully, and can be told to answer slowly
// (SetDelay) or not at all (SetSilent) to test timeouts and recovery. Use
// it by pointer; the zero value is ready.
type Sandbox struct {
	memory
}

// Test card numbers with special behaviour. Any other card number paylink
// takes (paylink.ParseCardNumber: Luhn-valid, of a known brand at a length
// it issues) is approved.
const (
	CardDecline             = "4000000000000002"
	CardInsufficientFunds   = "4000000000009995"
	CardProcessingError     = "4000000000000119"
	CardThreeDSChallenge    = "4000000000003220"
	CardThreeDSFrictionless = "4000000000003063"
)

// ThreeDSVersion is the 3-D Secure protocol version the sandbox reports.
const ThreeDSVersion = "2.2.0"

// Authorize decides the outcome from the card number. 3-D Secure applies
// only when requested: the challenge card then needs a challenge (unless
// the request carries a completed one), and the frictionless card is
// authenticated at once.
func (s *Sandbox) Authorize(ctx context.Context, req paylink.AuthRequest) (paylink.AuthResult, error) {
	res := decide(req)
	err := s.perform(ctx, opKey{kind: paylink.OpAuthorize, reference: req.Reference}, paylink.InquiryResult{Auth: res, Amount: req.Amount})
	if err != nil {
		return paylink.AuthResult{}, err
	}
	return res, nil
}

// AnswersInProcess reports that the sandbox answers at once from this
// process's memory, unless it was told to be slow or silent: purchases
// then ask it inside their own database transaction (see
// paylink.InProcessProcessor).
func (s *Sandbox) AnswersInProcess() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delay == 0 && !s.silent
}

// AuthorizeInProcess decides like Authorize and counts the request, but
// does not remember the operation: it is asked inside the purchase's
// database transaction, so nothing will ever inquire about it (its
// memory is for the operations recovery may ask about).
func (s *Sandbox) AuthorizeInProcess(ctx context.Context, req paylink.AuthRequest) (paylink.AuthResult, error) {
	if err := s.count(ctx, paylink.OpAuthorize); err != nil {
		return paylink.AuthResult{}, err
	}
	return decide(req), nil
}

// decide is the sandbox's verdict on an authorisation.
func decide(req paylink.AuthRequest) paylink.AuthResult {
	res := paylink.AuthResult{
		AcquirerTransID: acquirerID(req.Reference),
		AVSResult:       "unavailable",
		CVVResult:       cvvResult(req.Card.CVC),
	}
	if req.ThreeDS {
		switch {
		case req.Authenticated != nil:
			res.ThreeDS = req.Authenticated
		case req.Card.Number == CardThreeDSChallenge:
			res.Outcome = paylink.OutcomeChallenge
			res.ThreeDS = &paylink.ThreeDS{Version: ThreeDSVersion, ChallengeIndicator: "challenge", DSTransID: DSTransID(req.Reference)}
			return res
		case req.Card.Number == CardThreeDSFrictionless:
			res.ThreeDS = &paylink.ThreeDS{Result: "authenticated", Version: ThreeDSVersion, ECI: "05",
				ChallengeIndicator: "frictionless", DSTransID: DSTransID(req.Reference)}
		}
	}
	switch req.Card.Number {
	case CardDecline:
		return declined(res, "05", "Do not honour", "The card was declined by the issuer (do not honour). Ask the customer to use another card or contact their bank.")
	case CardInsufficientFunds:
		return declined(res, "51", "Insufficient funds", "The card was declined for insufficient funds. Ask the customer to use another card.")
	case CardProcessingError:
		res.Outcome = paylink.OutcomeFailed
		res.Decline = &paylink.Decline{ProcessorCode: "96", ProcessorMessage: "System malfunction"}
		res.Message = "The payment could not be processed because of a processing error at the acquirer; no money was taken. Try again later."
		return res
	}
	res.Outcome = paylink.OutcomeApproved
	res.AuthCode = authCode(req.Reference)
	return res
}

// Capture settles a hold; the sandbox always approves.
func (s *Sandbox) Capture(ctx context.Context, req paylink.OpRequest) (paylink.OpResult, error) {
	return s.followUp(ctx, paylink.OpCapture, req, acquirerID("capture:"+req.Reference))
}

// Void releases a hold; the sandbox always approves.
func (s *Sandbox) Void(ctx context.Context, req paylink.OpRequest) (paylink.OpResult, error) {
	return s.followUp(ctx, paylink.OpVoid, req, acquirerID("void:"+req.Reference))
}

// Refund returns funds; the sandbox always approves.
func (s *Sandbox) Refund(ctx context.Context, req paylink.OpRequest) (paylink.OpResult, error) {
	return s.followUp(ctx, paylink.OpRefund, req, acquirerID("refund:"+req.OpReference))
}

// Inquire answers from the sandbox's memory: the operation's result, or
// not found when it never received it.
func (s *Sandbox) Inquire(ctx context.Context, q paylink.Inquiry) (paylink.InquiryResult, error) {
	return s.inquire(ctx, q)
}

// followUp performs an approved capture, void or refund.
func (s *Sandbox) followUp(ctx context.Context, kind paylink.OpKind, req paylink.OpRequest, id string) (paylink.OpResult, error) {
	res := paylink.OpResult{AcquirerTransID: id}
	k := opKey{kind: kind, reference: req.Reference, opRef: req.OpReference}
	if err := s.perform(ctx, k, paylink.InquiryResult{Op: res, Amount: req.Amount}); err != nil {
		return paylink.OpResult{}, err
	}
	return res, nil
}

// DSTransID derives a directory server transaction id (UUID shaped) from
// a reference, so that it is stable for one transaction.
func DSTransID(ref string) string {
	h := sha256.Sum256([]byte("ds:" + ref))
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

func declined(res paylink.AuthResult, code, msg, message string) paylink.AuthResult {
	res.Outcome = paylink.OutcomeDeclined
	res.Decline = &paylink.Decline{ProcessorCode: code, ProcessorMessage: msg, NetworkDecline: code}
	res.Message = message
	return res
}

// cvvResult: the sandbox accepts any CVC, and records when none was sent.
func cvvResult(cvc string) string {
	if cvc == "" {
		return "unchecked"
	}
	return "pass"
}

// authCode derives a six-digit authorisation code from the reference.
func authCode(ref string) string {
	h := sha256.Sum256([]byte("auth:" + ref))
	return fmt.Sprintf("%06d", (uint32(h[0])<<16|uint32(h[1])<<8|uint32(h[2]))%1000000)
}

func acquirerID(ref string) string {
	h := sha256.Sum256([]byte("acq:" + ref))
	return "SBX" + hex.EncodeToString(h[:8])
}

var (
	_ paylink.Processor          = (*Sandbox)(nil)
	_ paylink.InProcessProcessor = (*Sandbox)(nil)
)
