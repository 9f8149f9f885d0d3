// Package mailer sends plain-text mail over SMTP (net/smtp), for the
// optional mail of paylink's dashboard (invites). It is configured by the
// serve flags --smtp-addr, --smtp-from, --smtp-username and
// --smtp-password-file; without --smtp-addr nothing is sent.
package mailer

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"time"
)

// Timeout bounds one message's whole SMTP conversation.
const Timeout = 30 * time.Second

// Config says where and as whom mail is sent.
type Config struct {
	// Addr is the SMTP server, host:port (a submission port such as 587).
	Addr string
	// From is the sender address, optionally with a name ("paylink
	// <no-reply@example.com>").
	From string
	// Username and Password, when Username is set, authenticate with
	// PLAIN, which net/smtp allows only over TLS (STARTTLS, used whenever
	// the server offers it) or to the local host.
	Username, Password string
}

// SMTP sends mail through one server.
type SMTP struct {
	cfg  Config
	from *mail.Address
}

// New checks cfg and returns a sender.
func New(cfg Config) (*SMTP, error) {
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("smtp address %q: %w", cfg.Addr, err)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp sender %q: %w", cfg.From, err)
	}
	return &SMTP{cfg: cfg, from: from}, nil
}

// Send sends one plain-text message to one address. The subject and body
// are text (attacker input may be in them): the subject is MIME-encoded,
// so it cannot add a header line, and the body is quoted-printable.
func (s *SMTP) Send(ctx context.Context, to, subject, body string) error {
	rcpt, err := mail.ParseAddress(to)
	if err != nil {
		return fmt.Errorf("recipient: %w", err)
	}
	msg, err := s.message(rcpt, subject, body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("dial smtp: %w", err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	if err := s.converse(conn, rcpt.Address, msg); err != nil {
		return fmt.Errorf("smtp %s: %w", s.cfg.Addr, err)
	}
	return nil
}

// converse runs the SMTP conversation for one message on conn.
func (s *SMTP) converse(conn net.Conn, rcpt string, msg []byte) error {
	host, _, _ := net.SplitHostPort(s.cfg.Addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return err
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
			return fmt.Errorf("starttls: %w", err)
		}
	}
	if s.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, host)); err != nil {
			return fmt.Errorf("auth: %w", err)
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return fmt.Errorf("mail from: %w", err)
	}
	if err := c.Rcpt(rcpt); err != nil {
		return fmt.Errorf("rcpt to: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("end message: %w", err)
	}
	return c.Quit()
}

// message is the RFC 5322 message: headers, then the body as
// quoted-printable UTF-8 text.
func (s *SMTP) message(to *mail.Address, subject, body string) ([]byte, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("message id: %w", err)
	}
	_, domain, _ := strings.Cut(s.from.Address, "@")
	var b bytes.Buffer
	for _, h := range [][2]string{
		{"From", s.from.String()},
		{"To", to.String()},
		{"Subject", mime.QEncoding.Encode("utf-8", subject)},
		{"Date", time.Now().UTC().Format(time.RFC1123Z)},
		{"Message-ID", "<" + hex.EncodeToString(id) + "@" + domain + ">"},
		{"MIME-Version", "1.0"},
		{"Content-Type", "text/plain; charset=utf-8"},
		{"Content-Transfer-Encoding", "quoted-printable"},
	} {
		if strings.ContainsAny(h[1], "\r\n") {
			return nil, errors.New("mail header " + h[0] + " holds a line break")
		}
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(strings.ReplaceAll(body, "\n", "\r\n"))); err != nil {
		return nil, fmt.Errorf("encode body: %w", err)
	}
	if err := qp.Close(); err != nil {
		return nil, fmt.Errorf("encode body: %w", err)
	}
	return b.Bytes(), nil
}
