package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// conn is one keep-alive HTTP/1.1 connection that writes pre-built
// requests and parses only what a load client needs from the answer
// (status, Content-Length or chunked body, Connection: close). It costs a
// fraction of net/http's client per request, so that the generator leaves
// the shared cores to the server it measures.
type conn struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
	body []byte // the last response's body, reused
}

// requestTimeout bounds one request and its answer.
const requestTimeout = 30 * time.Second

// response is what conn reads of an answer. body aliases conn's buffer
// until the next request.
type response struct {
	status int
	body   []byte
	close  bool // the server will close the connection after this answer
}

// do sends req (a complete HTTP/1.1 request) and reads the answer,
// dialling first when the connection is closed. After an error the
// connection is closed; the next call dials again.
func (c *conn) do(req []byte) (response, error) {
	if c.c == nil {
		if err := c.dial(); err != nil {
			return response{}, err
		}
	}
	// A server that stops answering fails the request instead of hanging
	// the run.
	c.c.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := c.c.Write(req); err != nil {
		c.close()
		return response{}, fmt.Errorf("write %s: %w", c.addr, err)
	}
	resp, err := readResponse(c.br, c.body[:0])
	c.body = resp.body
	if err != nil || resp.close {
		c.close()
	}
	if err != nil {
		return resp, fmt.Errorf("read %s: %w", c.addr, err)
	}
	return resp, nil
}

func (c *conn) dial() error {
	nc, err := net.DialTimeout("tcp", c.addr, 10*time.Second)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	c.c = nc
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, 16<<10)
	} else {
		c.br.Reset(nc)
	}
	return nil
}

func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

var (
	errMalformed = errors.New("malformed HTTP response")
	errNoLength  = errors.New("response has neither Content-Length nor chunked encoding")
)

// readResponse reads one HTTP/1.1 response, appending its body to buf.
// A body is delimited by Content-Length or chunked transfer encoding
// (net/http streams a large answer written without a length chunked);
// 1xx, 204 and 304 answers have none. A body delimited only by the
// connection's end is refused: this client keeps its connections open.
func readResponse(br *bufio.Reader, buf []byte) (response, error) {
	resp := response{body: buf}
	line, err := br.ReadSlice('\n')
	if err != nil {
		return resp, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return resp, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	resp.status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return resp, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	resp.close = line[7] == '0' // HTTP/1.0
	length, chunked := -1, false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return resp, fmt.Errorf("headers: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return resp, fmt.Errorf("%w: header %q", errMalformed, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return resp, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			resp.close = resp.close || bytes.EqualFold(value, []byte("close"))
		}
	}
	switch {
	case resp.status < 200 || resp.status == 204 || resp.status == 304:
		return resp, nil
	case chunked:
		resp.body, err = readChunked(br, resp.body)
	case length >= 0:
		resp.body, err = readN(br, resp.body, length)
	default:
		err = errNoLength
	}
	return resp, err
}

// readN appends exactly n bytes from br to buf.
func readN(br *bufio.Reader, buf []byte, n int) ([]byte, error) {
	start := len(buf)
	buf = append(buf, make([]byte, n)...)
	if _, err := io.ReadFull(br, buf[start:]); err != nil {
		return buf[:start], fmt.Errorf("body: %w", err)
	}
	return buf, nil
}

// readChunked appends a chunked body to buf and skips its trailers.
func readChunked(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return buf, fmt.Errorf("chunk size: %w", err)
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 32)
		if err != nil || n < 0 {
			return buf, fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if n == 0 {
			return buf, skipTrailers(br)
		}
		if buf, err = readN(br, buf, int(n)); err != nil {
			return buf, err
		}
		if crlf, err := br.ReadSlice('\n'); err != nil || len(bytes.TrimRight(crlf, "\r\n")) != 0 {
			return buf, fmt.Errorf("%w: no line end after a chunk", errMalformed)
		}
	}
}

func skipTrailers(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("trailers: %w", err)
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil
		}
	}
}
