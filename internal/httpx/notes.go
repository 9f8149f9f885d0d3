package httpx

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
)

// notes are what the handlers of a request add to its access line: the
// merchant it acted for, the payment or refund it made or read, the code
// it was refused with. The request id a merchant quotes then leads to
// them.
type notes struct {
	mu    sync.Mutex
	attrs []any // key, value, ...
}

type notesKey struct{}

// withNotes returns ctx carrying an empty set of notes, and the set; ctx
// itself and nil when log writes no access line (its level is above
// INFO): nothing would read them.
func withNotes(ctx context.Context, log *slog.Logger) (context.Context, *notes) {
	if !log.Enabled(ctx, slog.LevelInfo) {
		return ctx, nil
	}
	n := &notes{}
	return context.WithValue(ctx, notesKey{}, n), n
}

// Note sets key to value on the access line of r's request ("merchant",
// "reference", "error_code"); an empty value notes nothing, and a key
// noted again keeps its last value. Never a secret, a card number or a
// token: the line is logged. A request that did not pass through Wrap
// notes nothing.
func Note(r *http.Request, key, value string) {
	n, _ := r.Context().Value(notesKey{}).(*notes)
	if n == nil || value == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := 0; i < len(n.attrs); i += 2 {
		if n.attrs[i] == key {
			n.attrs[i+1] = value
			return
		}
	}
	n.attrs = append(n.attrs, key, value)
}

// appendTo appends the notes to an access line's attributes.
func (n *notes) appendTo(attrs []any) []any {
	if n == nil {
		return attrs
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return append(attrs, n.attrs...)
}
