package client

// Transaction statuses: the status of a purchase, hold, direct debit or
// refund (TransactionResult.Purchase.Status, Status.Status,
// Refund.Status, Webhook.Status). The fields stay strings, so a status
// paylink adds later still decodes: compare with these constants and
// treat one you do not know as not paid.
const (
	StatusApproved = "APPROVED" // paid (a capture, a cleared debit, a refund made)
	StatusDeclined = "DECLINED" // the issuer or bank declined; final
	// StatusFailed: the payment could not be processed and no money
	// moved; the customer may try again.
	StatusFailed = "FAILED"
	// StatusRequiresAuthentication: the customer must complete 3-D
	// Secure at Customer.AuthenticationRedirectURL; no money moved yet.
	StatusRequiresAuthentication = "REQUIRES_AUTHENTICATION"
	StatusPreAuthorised          = "PRE_AUTHORISED"          // a hold: capture or cancel it
	StatusPreAuthorisedReversed  = "PRE_AUTHORISED_REVERSED" // a hold cancelled or expired
	// StatusPending: a direct debit awaiting clearing, or a payment whose
	// processor answer is awaited. Do not retry it: look it up later.
	StatusPending = "PENDING"
	// StatusUnknown: the processor could not confirm the outcome and
	// the payment needs review (docs/lifecycle.md, Recovery). Do not
	// ship, retry or refund it until it moves on.
	StatusUnknown = "UNKNOWN"
)

// Payment link statuses (PaymentLink.Status), lower case as paylink
// sends them.
const (
	LinkUnpaid    = "unpaid"
	LinkPaid      = "paid"
	LinkCancelled = "cancelled"
	LinkExpired   = "expired" // unpaid past its expiry
)

// Response codes of a result (HTTP 200; Result.ResponseCode). Decide to
// ship on the status, never on the response code alone: a status
// look-up answers CodeSuccess whatever the status it finds.
const (
	CodeSuccess  = "success"  // processed: paid, held, submitted, or awaiting authentication
	CodeDeclined = "declined" // StatusDeclined
	CodeFailed   = "failed"   // StatusFailed: nothing charged; retry with a new transaction token
	CodePending  = "pending"  // the processor's answer is awaited: look it up, do not retry
	CodeUnknown  = "unknown"  // StatusUnknown: needs review
)

// Response codes of a refusal (any non-2xx answer; Error.Code, IsCode).
// docs/errors.md says what each means. The field stays a string, so a
// code paylink adds later still decodes.
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
	CodeServiceUnavailable      = "service_unavailable"
	CodeAlreadyCaptured         = "already_captured"
	CodeHoldReleased            = "hold_released"
	CodeOperationInProgress     = "operation_in_progress"
	CodeNotRefundable           = "not_refundable"
	CodeAuthenticationPending   = "authentication_pending"
	CodeAuthenticationComplete  = "authentication_already_completed"
	CodeAuthenticationExpired   = "authentication_expired"
	CodeProcessorUnavailable    = "processor_unavailable"
	CodeWebhookNotWhitelisted   = "webhook_url_not_whitelisted"
	CodeLinkPaid                = "payment_link_paid"
	CodeLinkCancelled           = "payment_link_cancelled"
	CodeLinkExpired             = "payment_link_expired"
	CodeLinkInProgress          = "payment_link_in_progress"
	// CodeHTTPError is the client's own: an answer whose body is not
	// paylink's (a proxy's error page, say); Error.Message is the
	// HTTP status text.
	CodeHTTPError = "http_error"
)
