package sqlstore

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// DSN is a parsed data source name.
type DSN struct {
	Engine Engine
	Path   string // SQLite file path
	URL    string // PostgreSQL connection URL
}

// ParseDSN accepts a file path or sqlite:PATH for SQLite and a
// postgres:// or postgresql:// URL for PostgreSQL. A PostgreSQL
// connection string of key=value pairs (host=... dbname=...) is refused,
// without quoting it: taken as a path it would make a SQLite file of
// that name, password and all, and each instance given it a database of
// its own.
func ParseDSN(dsn string) (DSN, error) {
	switch {
	case dsn == "":
		return DSN{}, errors.New("empty database DSN")
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		if _, err := url.Parse(dsn); err != nil {
			// Not %w: url.Parse's error quotes the whole URL, password and all.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return DSN{}, fmt.Errorf("postgres DSN: cannot parse it as a URL: %v", err)
		}
		return DSN{Engine: Postgres, URL: dsn}, nil
	case strings.HasPrefix(dsn, "sqlite:"):
		dsn = strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
	case strings.HasPrefix(dsn, "file:"):
		// Not a path: SQLite's own URI form, whose parameters paylink sets itself.
		return DSN{}, errors.New("a SQLite database is a file path or sqlite:PATH, not a file: URI")
	case keywordDSN(dsn):
		return DSN{}, errors.New("a PostgreSQL connection string of key=value pairs is not taken (it would be read as a SQLite file name): " +
			"write it as a URL, postgres://USER:PASSWORD@HOST:PORT/DBNAME?sslmode=MODE")
	}
	if strings.Contains(dsn, "://") {
		return DSN{}, fmt.Errorf("unsupported database DSN scheme in %q", RedactDSN(dsn))
	}
	return DSN{Engine: SQLite, Path: dsn}, nil
}

// libpqKeywords are the keys of PostgreSQL's key=value connection
// strings that mark one (a file path seldom holds "host=").
var libpqKeywords = []string{"host", "hostaddr", "port", "dbname", "user", "password", "passfile", "sslmode", "service"}

// keywordDSN reports whether dsn is a PostgreSQL key=value connection
// string: one of its blank-separated words is a libpq keyword and "=".
func keywordDSN(dsn string) bool {
	for _, word := range strings.Fields(dsn) {
		key, _, ok := strings.Cut(word, "=")
		for _, k := range libpqKeywords {
			if ok && strings.EqualFold(key, k) {
				return true
			}
		}
	}
	return false
}

// RedactDSN is a database DSN as it may be shown: a URL without its
// password (in its user part, or any query parameter whose name holds
// "password", as sslpassword), a key=value connection string with every
// password=VALUE (quoted or not) as password=xxxxx.
// Anything else is returned as it is.
func RedactDSN(dsn string) string {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "(set, not shown: it does not parse as an address)"
		}
		q := u.Query()
		for key := range q {
			if strings.Contains(strings.ToLower(key), "password") { // password, sslpassword
				q.Set(key, "xxxxx")
				u.RawQuery = q.Encode()
			}
		}
		return u.Redacted()
	}
	return redactKeywordPasswords(dsn)
}

// redactKeywordPasswords replaces the value of every password key of a
// key=value connection string: up to the next blank, or a quoted value
// ('...', with \' and \\ inside) whole.
func redactKeywordPasswords(s string) string {
	var b strings.Builder
	for {
		i := indexFold(s, "password")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		rest := strings.TrimLeft(s[i+len("password"):], " \t")
		if !strings.HasPrefix(rest, "=") {
			b.WriteString(s[:i+len("password")])
			s = s[i+len("password"):]
			continue
		}
		b.WriteString(s[:i] + "password=xxxxx")
		s = strings.TrimLeft(rest[1:], " \t")
		s = s[valueEnd(s):]
	}
}

// indexFold is the index of the first ASCII word in s, ignoring case, or
// -1. (strings.ToLower would change the length of some non-ASCII text,
// and its indexes then miss s's.)
func indexFold(s, word string) int {
	for i := 0; i+len(word) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(word)], word) {
			return i
		}
	}
	return -1
}

// valueEnd is where a key=value connection string's value at the start
// of s ends: after its closing quote, or at the first blank.
func valueEnd(s string) int {
	if !strings.HasPrefix(s, "'") {
		if i := strings.IndexAny(s, " \t\n"); i >= 0 {
			return i
		}
		return len(s)
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			return i + 1
		}
	}
	return len(s)
}
