package mailer_test

import (
	"context"
	"mime"
	"testing"

	"github.com/paylink/paylink/internal/mailer"
	"github.com/paylink/paylink/internal/mailer/mailertest"
)

func TestSend(t *testing.T) {
	tests := []struct {
		name, user, password string
	}{
		{"without authentication", "", ""},
		{"with AUTH PLAIN", "paylink", "s3cret smtp password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mailertest.Start(t, tt.user, tt.password)
			m, err := mailer.New(mailer.Config{Addr: srv.Addr, From: "paylink <no-reply@example.com>", Username: tt.user, Password: tt.password})
			if err != nil {
				t.Fatal(err)
			}
			subject := "Café <Acme>\r\nBcc: victim@example.com"
			body := "Hello,\n.\nA line with a dot alone, é, and <b>markup</b> kept as text.\n"
			if err := m.Send(context.Background(), "jo@example.com", subject, body); err != nil {
				t.Fatalf("send: %v", err)
			}
			got := srv.Messages()
			if len(got) != 1 || got[0].From != "no-reply@example.com" || len(got[0].To) != 1 || got[0].To[0] != "jo@example.com" || got[0].User != tt.user {
				t.Fatalf("envelopes: got %+v, want one from no-reply@example.com to jo@example.com as %q", got, tt.user)
			}
			head, gotBody, err := got[0].Parse()
			if err != nil {
				t.Fatal(err)
			}
			dec, err := new(mime.WordDecoder).DecodeHeader(head.Get("Subject"))
			if err != nil || dec != subject {
				t.Errorf("subject: got %q (%v), want %q, encoded on one header line", dec, err, subject)
			}
			if head.Get("Bcc") != "" {
				t.Errorf("a subject added a header: Bcc %q", head.Get("Bcc"))
			}
			if gotBody != body { // the server reads lines ending CRLF as LF
				t.Errorf("body: got %q, want %q", gotBody, body)
			}
			if ct := head.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type: got %q, want text/plain; charset=utf-8", ct)
			}
		})
	}
}

func TestSendRefused(t *testing.T) {
	srv := mailertest.Start(t, "paylink", "right")
	tests := []struct {
		name string
		cfg  mailer.Config
		to   string
	}{
		{"wrong password", mailer.Config{Addr: srv.Addr, From: "no-reply@example.com", Username: "paylink", Password: "wrong"}, "jo@example.com"},
		{"no credentials", mailer.Config{Addr: srv.Addr, From: "no-reply@example.com"}, "jo@example.com"},
		{"bad recipient", mailer.Config{Addr: srv.Addr, From: "no-reply@example.com", Username: "paylink", Password: "right"}, "jo@example.com\r\nBcc: x@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mailer.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Send(context.Background(), tt.to, "s", "b"); err == nil {
				t.Errorf("send: got nil, want an error")
			}
		})
	}
	if got := srv.Messages(); len(got) != 0 {
		t.Errorf("messages: got %d, want none", len(got))
	}
}

func TestNewChecksConfig(t *testing.T) {
	for _, cfg := range []mailer.Config{
		{Addr: "mail.example.com", From: "no-reply@example.com"},
		{Addr: "mail.example.com:587", From: "not an address"},
	} {
		if _, err := mailer.New(cfg); err == nil {
			t.Errorf("New(%+v): got nil, want an error", cfg)
		}
	}
}
