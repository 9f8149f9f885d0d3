package paylink

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Kind classifies an error for transport; the API maps each kind to one
// HTTP status.
type Kind int

// Error kinds.
const (
	KindInternal         Kind = iota // 500: a bug or an unavailable dependency
	KindInvalid                      // 400: the request is malformed or breaks a rule
	KindUnauthorized                 // 401: API key missing or wrong
	KindForbidden                    // 403: company token not this API key's
	KindNotFound                     // 404: unknown reference (or another merchant's)
	KindConflict                     // 409: the resource is not in a state that allows this
	KindTooLarge                     // 413: request body too large
	KindRateLimited                  // 429: too many requests
	KindUnavailable                  // 503: the database, the acquirer or the bank could not be reached; retry later
	KindMethodNotAllowed             // 405: the path exists, under other methods
	KindUnsupportedMedia             // 415: a body in an encoding or media type the API does not read
)

// Outcome response codes: the response_code of an API answer that is not
// an error. A transaction result says CodeSuccess only when the money
// moved or is held (or awaits authentication); every other answer that
// succeeds says CodeSuccess.
const (
	CodeSuccess  = "success"
	CodeDeclined = "declined" // StatusDeclined
	CodeFailed   = "failed"   // StatusFailed: nothing charged
	CodePending  = "pending"  // StatusProcessing: the processor's answer is awaited (or was lost and is being asked for)
	CodeUnknown  = "unknown"  // StatusUnknown: the processor could not say; needs review
)

// Stable response codes. docs/errors.md lists each with its meaning; a
// code, once published, never changes meaning.
const (
	CodeInvalidRequest          = "invalid_request"
	CodeMalformedJSON           = "malformed_json"
	CodeUnauthorized            = "unauthorized"
	CodeCompanyTokenMismatch    = "company_token_mismatch"
	CodeNotFound                = "not_found"
	CodeMethodNotAllowed        = "method_not_allowed"
	CodeTransactionTokenInvalid = "transaction_token_invalid"
	CodeTransactionTokenUsed    = "transaction_token_used"
	CodeTransactionTokenExpired = "transaction_token_expired"
	CodeCardTokenInvalid        = "card_token_invalid"
	CodeCardTokenUsed           = "card_token_used"
	CodeInvalidState            = "invalid_state"
	CodeAmountExceedsAuthorised = "amount_exceeds_authorised"
	CodeAmountExceedsRefundable = "amount_exceeds_refundable"
	CodeCurrencyMismatch        = "currency_mismatch"
	CodeNotSupported            = "not_supported"
	CodeBodyTooLarge            = "body_too_large"
	CodeUnsupportedMediaType    = "unsupported_media_type"
	CodeRateLimited             = "rate_limited"
	CodeIdempotencyConflict     = "idempotency_key_conflict"
	CodeInternal                = "internal_error"
	// CodeClientClosedRequest is logged and counted (status 499) for a
	// request whose client went away before its answer; no client reads it.
	CodeClientClosedRequest = "client_closed_request"
	CodeServiceUnavailable  = "service_unavailable"

	// Card lifecycle.
	CodeAlreadyCaptured        = "already_captured"
	CodeHoldReleased           = "hold_released"
	CodeOperationInProgress    = "operation_in_progress"
	CodeNotRefundable          = "not_refundable"
	CodeAuthenticationPending  = "authentication_pending"
	CodeAuthenticationComplete = "authentication_already_completed"
	CodeAuthenticationExpired  = "authentication_expired"
	CodeProcessorUnavailable   = "processor_unavailable"
)

// Response codes of payment links (link.go).
const (
	CodeWebhookNotWhitelisted = "webhook_url_not_whitelisted"
	CodeLinkPaid              = "payment_link_paid"
	CodeLinkCancelled         = "payment_link_cancelled"
	CodeLinkExpired           = "payment_link_expired"
	CodeLinkInProgress        = "payment_link_in_progress"
)

// Response codes of the pages (the hosted page and the dashboard).
const (
	// CodeCSRFFailed refuses a form (or the hosted page's surcharge call)
	// without this browser's CSRF token or from another origin.
	CodeCSRFFailed = "csrf_failed"
	// CodeRefundNotApproved is the dashboard's answer to a refund the
	// processor or bank declined or rejected. One whose answer is still
	// awaited (PROCESSING, UNKNOWN) is not refused: the page says it is
	// pending.
	CodeRefundNotApproved = "refund_not_approved"
)

// Response codes of the dashboard's user operations (user*.go, staff_auth.go).
const (
	CodeWeakPassword     = "weak_password"
	CodeSignInFailed     = "sign_in_failed"
	CodeSignInThrottled  = "sign_in_throttled"
	CodeSessionExpired   = "session_expired"
	CodeEmailTaken       = "email_taken"
	CodeInviteInvalid    = "invite_invalid"
	CodeLastAdmin        = "last_admin"
	CodeTOTPRequired     = "totp_required"
	CodeTOTPInvalid      = "totp_invalid"
	CodePermissionDenied = "permission_denied"
)

// Error is paylink's error. Code and Message are safe to show a client;
// Op and Err are internal detail that is logged and never sent. An
// *Error kept in a package variable (errHoldExpired, the answers every
// refusal of its kind shares) is never modified once made: code that
// needs another Message or Fields copies it first, or makes a new one.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Fields  map[string]string // field path -> problem, for validation errors
	Op      string
	Err     error
}

// Error is the error's whole text, for logs: its operation, code,
// message and cause. A client is shown Code and Message alone.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op + ": ")
	}
	b.WriteString(e.Code)
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap is the cause, so that errors.Is and errors.As see through e.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of the kind and code with a client-safe message.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected error; the client sees only a generic message.
func Internal(op string, err error) *Error {
	return &Error{Kind: KindInternal, Code: CodeInternal, Message: "internal error", Op: op, Err: err}
}

// AsError returns err as an *Error, wrapping unknown errors as internal.
// An error that is, or wraps, ErrUnavailable is unavailable even where
// the Service wrapped it as internal: an unreachable database is not a
// bug, and the client may retry.
func AsError(err error) *Error {
	var e *Error
	if !errors.As(err, &e) {
		e = Internal("", err)
	}
	if e.Kind == KindInternal && errors.Is(err, ErrCommitInDoubt) {
		return &Error{Kind: KindUnavailable, Code: CodeServiceUnavailable, Op: e.Op, Err: err,
			Message: "the database's answer was lost and whether this request took effect cannot be told yet: " +
				"do not send it again under a new Idempotency-Key; look for what it would have made first " +
				"(a retry under the same key is answered 409 until its lock ends)"}
	}
	if e.Kind == KindInternal && errors.Is(err, ErrUnavailable) {
		return &Error{Kind: KindUnavailable, Code: CodeServiceUnavailable, Op: e.Op, Err: err,
			Message: "the service is briefly unavailable (its database cannot be reached); retry with the same Idempotency-Key"}
	}
	return e
}

// FieldErrors collects validation problems, one per field path.
type FieldErrors map[string]string

// Add records a problem for a field unless one is already recorded.
func (f FieldErrors) Add(field, problem string) {
	if _, ok := f[field]; !ok {
		f[field] = problem
	}
}

// Err returns nil when there are no problems, else an invalid_request
// error naming every field: its message lists each field and its problem
// ("name: is required; trading_name: is required"), so a reader of the
// message alone (the command line's) learns everything to fix at once.
func (f FieldErrors) Err() error {
	if len(f) == 0 {
		return nil
	}
	names := make([]string, 0, len(f))
	for k := range f {
		names = append(names, k)
	}
	sort.Strings(names)
	problems := make([]string, len(names))
	for i, name := range names {
		problems[i] = name + ": " + f[name]
	}
	msg := strings.Join(problems, "; ")
	return &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: msg, Fields: map[string]string(f)}
}

// ErrNotFound is the store's error for a missing row.
var ErrNotFound = errors.New("not found")

// ErrUnavailable marks a store error that says the database cannot be
// reached right now (refused connection, server restarting or shutting
// down, SQLite busy beyond its timeout), as opposed to a bug. Stores wrap
// such errors with it; nothing was committed, so the operation may be
// retried.
var ErrUnavailable = errors.New("database unavailable")

// ErrCommitUnanswered marks a store error for a transaction whose COMMIT
// was sent and whose answer was lost (a connection cut, or ended by the
// server, on the way): it may have committed. An unreachable database
// before the COMMIT, or one that answered it with an error, is not it:
// nothing was committed. It comes with ErrUnavailable.
var ErrCommitUnanswered = errors.New("the commit's answer was lost")

// ErrConflict is the store's error for a failed compare-and-set.
var ErrConflict = errors.New("conflict")

// ErrKeyInProgress marks the refusal of a request whose Idempotency-Key
// belongs to a request still being answered: of the refusals under a
// key, the one a retry after a short wait passes (the API answers it
// with Retry-After).
var ErrKeyInProgress = errors.New("idempotency key in progress")

// ErrCommitInDoubt marks a write, one that spends no transaction token,
// whose COMMIT's answer was lost and whose outcome could not be read back
// (Service.updateCreating): it may have taken effect. The API keeps the
// request's Idempotency-Key claimed, so that no retry under the key runs
// it a second time; the claim's lock ends in "never finished, and it may
// have completed".
var ErrCommitInDoubt = errors.New("the database's answer to the commit was lost: it may have committed")

// ErrTokenSpent is the store's error for a transaction token spent
// already (Tx.SpendTransactionToken); it is an ErrConflict.
var ErrTokenSpent = fmt.Errorf("transaction token spent: %w", ErrConflict)
