package processor

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

var aud = paylink.Currency{Code: "AUD", Exponent: 2}

// Inquire answers from what the sandbox did: the operation's result, or
// not found for one it never received.
func TestSandboxInquiryAnswersTruthfully(t *testing.T) {
	ctx := context.Background()
	s, b := &Sandbox{}, &Bank{}
	amount := paylink.Money{Amount: 1000, Currency: aud}
	if _, err := s.Authorize(ctx, paylink.AuthRequest{Reference: "pr_ok", Card: paylink.CardDetails{Number: "4111111111111111"}, Amount: amount}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authorize(ctx, paylink.AuthRequest{Reference: "pr_no", Card: paylink.CardDetails{Number: CardDecline}, Amount: amount}); err != nil {
		t.Fatal(err)
	}
	refund, err := s.Refund(ctx, paylink.OpRequest{Reference: "pr_ok", OpReference: "rf_1", Amount: amount})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.RefundDebit(ctx, paylink.BankRefund{Reference: "rf_dd", DebitReference: "dd_1",
		Account: paylink.BankAccount{Number: "12340009"}, Amount: amount}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		p    interface {
			Inquire(context.Context, paylink.Inquiry) (paylink.InquiryResult, error)
		}
		q     paylink.Inquiry
		check func(paylink.InquiryResult) bool
	}{
		{"approved authorisation", s, paylink.Inquiry{Kind: paylink.OpAuthorize, Reference: "pr_ok"}, func(r paylink.InquiryResult) bool {
			return r.Found && r.Auth.Outcome == paylink.OutcomeApproved && r.Auth.AuthCode != "" && r.Amount == amount
		}},
		{"declined authorisation", s, paylink.Inquiry{Kind: paylink.OpAuthorize, Reference: "pr_no"}, func(r paylink.InquiryResult) bool {
			return r.Found && r.Auth.Outcome == paylink.OutcomeDeclined && r.Auth.Decline.ProcessorCode == "05"
		}},
		{"refund with its id", s, paylink.Inquiry{Kind: paylink.OpRefund, Reference: "pr_ok", OpReference: "rf_1"}, func(r paylink.InquiryResult) bool {
			return r.Found && r.Op == refund
		}},
		{"another refund never received", s, paylink.Inquiry{Kind: paylink.OpRefund, Reference: "pr_ok", OpReference: "rf_2"}, func(r paylink.InquiryResult) bool { return !r.Found }},
		{"capture never received", s, paylink.Inquiry{Kind: paylink.OpCapture, Reference: "pr_ok"}, func(r paylink.InquiryResult) bool { return !r.Found }},
		{"rejected debit refund", b, paylink.Inquiry{Kind: paylink.OpDebitRefund, Reference: "dd_1", OpReference: "rf_dd"}, func(r paylink.InquiryResult) bool {
			return r.Found && !r.Refund.Accepted && r.Refund.Reason != nil
		}},
		{"debit never received", b, paylink.Inquiry{Kind: paylink.OpDebit, Reference: "dd_1"}, func(r paylink.InquiryResult) bool { return !r.Found }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.Inquire(ctx, tt.q)
			if err != nil || !tt.check(got) {
				t.Errorf("got %+v, %v", got, err)
			}
		})
	}
}

// A silent sandbox performs the operation but answers nothing, inquiries
// included, until the caller's deadline; a slow one answers late.
func TestSandboxSlowAndSilent(t *testing.T) {
	s := &Sandbox{}
	req := paylink.OpRequest{Reference: "pr_1", Amount: paylink.Money{Amount: 100, Currency: aud}}
	s.SetSilent(true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Capture(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("silent capture: got %v, want the deadline", err)
	}
	if _, err := s.Inquire(ctx, paylink.Inquiry{Kind: paylink.OpCapture, Reference: "pr_1"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("silent inquiry: got %v, want the deadline", err)
	}
	s.SetSilent(false)
	s.SetDelay(time.Hour)
	if _, err := s.Void(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow void past the deadline: got %v, want the deadline", err)
	}
	for _, kind := range []paylink.OpKind{paylink.OpCapture, paylink.OpVoid} {
		got, err := s.Inquire(context.Background(), paylink.Inquiry{Kind: kind, Reference: "pr_1"})
		if err != nil || !got.Found {
			t.Errorf("%s done without an answer: inquiry got %+v, %v; want found", kind, got, err)
		}
		if n := s.Received(kind); n != 1 {
			t.Errorf("%s received: got %d, want 1", kind, n)
		}
	}
}

// An authorisation asked in process answers as Authorize would and is
// counted, but is not remembered: nothing will inquire about it, and the
// sandbox's memory is kept for what recovery may ask about. A sandbox
// told to be slow or silent does not answer in process.
func TestSandboxInProcess(t *testing.T) {
	ctx := context.Background()
	s := &Sandbox{}
	req := paylink.AuthRequest{Reference: "pr_in", Card: paylink.CardDetails{Number: CardDecline},
		Amount: paylink.Money{Amount: 1000, Currency: aud}}
	got, err := s.AuthorizeInProcess(ctx, req)
	if want := decide(req); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	if n := s.Received(paylink.OpAuthorize); n != 1 {
		t.Errorf("received %d authorisations, want 1", n)
	}
	if res, err := s.Inquire(ctx, paylink.Inquiry{Kind: paylink.OpAuthorize, Reference: "pr_in"}); err != nil || res.Found {
		t.Errorf("inquiry: got %+v, %v; want not found", res, err)
	}
	if !s.AnswersInProcess() {
		t.Error("a sandbox answering at once: AnswersInProcess false")
	}
	s.SetDelay(time.Millisecond)
	if s.AnswersInProcess() {
		t.Error("a slow sandbox: AnswersInProcess true")
	}
	s.SetDelay(0)
	s.SetSilent(true)
	if s.AnswersInProcess() {
		t.Error("a silent sandbox: AnswersInProcess true")
	}
}
