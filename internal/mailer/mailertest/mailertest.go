// Package mailertest is a small SMTP server for tests: a fake at the
// outer edge (the operator's mail server), which records every message
// it is given so tests can read what paylink sent.
package mailertest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
	"testing"
)

// Message is one message the server accepted.
type Message struct {
	From string   // MAIL FROM
	To   []string // RCPT TO
	Data string   // the message as sent, headers and body, dot-unstuffed
	User string   // the AUTH PLAIN user, "" without AUTH
}

// Parse reads the message's header and its body, decoded from
// quoted-printable (the encoding paylink sends).
func (m Message) Parse() (mail.Header, string, error) {
	msg, err := mail.ReadMessage(strings.NewReader(m.Data))
	if err != nil {
		return nil, "", fmt.Errorf("parse message: %w", err)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		return nil, "", fmt.Errorf("decode body: %w", err)
	}
	return msg.Header, string(body), nil
}

// Server speaks enough SMTP (RFC 5321) for net/smtp: EHLO, AUTH PLAIN,
// MAIL, RCPT, DATA, RSET, NOOP and QUIT. Without TLS, so net/smtp's PLAIN
// authentication works only to the local host, as here.
type Server struct {
	// Addr is host:port to send to.
	Addr           string
	user, password string
	ln             net.Listener
	wg             sync.WaitGroup
	mu             sync.Mutex
	msgs           []Message
}

// Start listens on the loopback and stops at the test's end. With a user,
// the server offers AUTH PLAIN and refuses mail without those
// credentials.
func Start(t testing.TB, user, password string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen smtp: %v", err)
	}
	s := &Server{Addr: ln.Addr().String(), user: user, password: password, ln: ln}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

// Messages are the accepted messages, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			s.session(textproto.NewConn(conn))
		}()
	}
}

// session serves one connection until QUIT or an error.
func (s *Server) session(c *textproto.Conn) {
	var m Message
	authed := s.user == ""
	reply := func(code int, text string) bool { return c.PrintfLine("%d %s", code, text) == nil }
	if !reply(220, "mailertest ready") {
		return
	}
	for {
		line, err := c.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		ok := true
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO":
			if s.user != "" {
				ok = c.PrintfLine("250-mailertest") == nil && reply(250, "AUTH PLAIN")
			} else {
				ok = reply(250, "mailertest")
			}
		case "AUTH":
			user, err := s.checkPlain(arg)
			if err != nil {
				ok = reply(535, err.Error())
				break
			}
			authed, m.User = true, user
			ok = reply(235, "authenticated")
		case "MAIL":
			if !authed {
				ok = reply(530, "authentication required")
				break
			}
			m.From = path(arg, "FROM:")
			ok = reply(250, "ok")
		case "RCPT":
			m.To = append(m.To, path(arg, "TO:"))
			ok = reply(250, "ok")
		case "DATA":
			if !reply(354, "end with .") {
				return
			}
			data, err := c.ReadDotBytes()
			if err != nil {
				return
			}
			m.Data = string(data)
			s.mu.Lock()
			s.msgs = append(s.msgs, m)
			s.mu.Unlock()
			m = Message{User: m.User}
			ok = reply(250, "queued")
		case "RSET", "NOOP":
			ok = reply(250, "ok")
		case "QUIT":
			reply(221, "bye")
			return
		default:
			ok = reply(502, "not implemented")
		}
		if !ok {
			return
		}
	}
}

// path is the address of a MAIL or RCPT argument ("FROM:<a@b> ...").
func path(arg, prefix string) string {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return ""
	}
	p, _, _ := strings.Cut(arg[len(prefix):], " ")
	return strings.Trim(p, "<>")
}

// checkPlain checks an AUTH PLAIN argument ("PLAIN base64(\0user\0pass)").
func (s *Server) checkPlain(arg string) (string, error) {
	mech, b64, _ := strings.Cut(arg, " ")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if !strings.EqualFold(mech, "PLAIN") || err != nil {
		return "", errors.New("PLAIN with an initial response only")
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 3 || parts[1] != s.user || parts[2] != s.password {
		return "", errors.New("bad credentials")
	}
	return parts[1], nil
}
