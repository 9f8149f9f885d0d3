package dashboard

import (
	"net/http"
	"net/url"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// The developers page (admins only): API keys and their roll, the
// webhook settings and signing secret, and the webhook delivery log with
// a resend. New secrets are shown once, on the page that answers the
// POST, and never again.

// overlaps are the overlap windows the roll and rotate forms offer.
func overlaps() []overlap {
	return []overlap{
		{"0s", "none: stop the old one now"}, {"1h0m0s", "1 hour"}, {"24h0m0s", "24 hours"},
		{"72h0m0s", "3 days"}, {"168h0m0s", "7 days"},
	}
}

// overlap is one choice of an overlap window.
type overlap struct{ Value, Label string }

// developersData is the developers page.
type developersData struct {
	Keys       []*paylink.APIKey
	Webhook    paylink.WebhookConfig
	Log        *paylink.WebhookLogPage
	Pages      pageLinks
	FailedOnly bool
	Overlaps   []overlap
	// RollKey and RotateKey are the two forms' idempotency keys.
	RollKey, RotateKey string
	Now                time.Time
	// NewKey and NewSecret are the secrets just made, shown once.
	NewKey, NewSecret string
}

// CurrentKey is the id of the API key in force (Keys lists it first),
// which the roll form sends back: a roll made meanwhile refuses this one.
func (d developersData) CurrentKey() string {
	if len(d.Keys) == 0 || !d.Keys[0].ExpiresAt.IsZero() {
		return ""
	}
	return d.Keys[0].ID
}

// CurrentSecret is the version of the signing secret in force, which
// the rotation form sends back: a rotation made meanwhile refuses this
// one.
func (d developersData) CurrentSecret() string { return d.Webhook.CurrentSecret() }

// PreviousSecretUntil is when the previous signing secret stops signing
// after a rotation, nil when one secret signs or none (the template
// tells these apart by CurrentSecret).
func (d developersData) PreviousSecretUntil() *time.Time {
	until := time.Unix(d.Webhook.PreviousUntil, 0)
	if len(d.Webhook.Secrets) < 2 || !until.After(d.Now) {
		return nil
	}
	return &until
}

// developers shows the page.
func (h *Handler) developers(rq *request) error {
	return h.renderDevelopers(rq, http.StatusOK, view{Notice: developersNotice(rq.r.URL.Query().Get("done"))}, developersData{})
}

// developersNotice is the message after an action.
func developersNotice(done string) string {
	if done == "resent" {
		return "Webhook queued again: it goes out with the next dispatch."
	}
	return ""
}

// renderDevelopers renders the page with v's messages and d's secrets.
// After an action (a POST) the merchant is read again: the session's copy
// is from before it (a signing secret rotated); a plain view uses it.
func (h *Handler) renderDevelopers(rq *request, status int, v view, d developersData) error {
	ctx, m := rq.r.Context(), rq.ss.Merchant
	if rq.r.Method == http.MethodPost {
		var err error
		if m, err = h.svc.Merchant(ctx, m.ID); err != nil {
			return err
		}
	}
	q := rq.r.URL.Query()
	d.FailedOnly = q.Get("failed") == "1"
	keys, err := h.svc.APIKeys(ctx, m)
	if err != nil {
		return err
	}
	log, err := h.svc.WebhookLog(ctx, m, paylink.WebhookLogFilter{FailedOnly: d.FailedOnly, Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	if d.RollKey, err = newIdempotencyKey(); err != nil {
		return err
	}
	if d.RotateKey, err = newIdempotencyKey(); err != nil {
		return err
	}
	d.Keys, d.Log, d.Webhook, d.Overlaps, d.Now = keys, log, m.Settings.Webhook, overlaps(), h.svc.Now()
	paging := url.Values{"cursor": q["cursor"], "prev": q["prev"]} // not the notice of an action
	if d.FailedOnly {
		paging.Set("failed", "1")
	}
	d.Pages = pagesOf(paging, "/dashboard/developers", log.Next)
	v.Title, v.Data = "Developers", d
	rq.render(status, "developers", v)
	return nil
}

// formOverlap reads the overlap chosen in a form.
func formOverlap(rq *request) (time.Duration, error) {
	raw := rq.r.PostFormValue("overlap")
	for _, o := range overlaps() {
		if o.Value == raw {
			return time.ParseDuration(raw)
		}
	}
	return 0, &paylink.Error{Kind: paylink.KindInvalid, Code: paylink.CodeInvalidRequest, Message: "choose one of the overlap windows offered",
		Fields: map[string]string{"overlap": "choose one of the windows offered"}}
}

// rollKey issues a new API key and shows it once; the old key works
// until the chosen overlap ends.
func (h *Handler) rollKey(rq *request) error {
	return h.issueSecret(rq, "roll_api_key", func(d time.Duration) (developersData, error) {
		// The key the page showed as current: a roll made meanwhile (by
		// another admin) refuses this one.
		key, err := h.svc.RollAPIKey(rq.r.Context(), rq.ss.Merchant.ID, rq.r.PostFormValue("current_key"), d)
		return developersData{NewKey: key}, err
	})
}

// rotateSecret gives the merchant a new webhook signing secret and shows
// it once; webhooks carry both signatures until the overlap ends.
func (h *Handler) rotateSecret(rq *request) error {
	return h.issueSecret(rq, "rotate_webhook_secret", func(d time.Duration) (developersData, error) {
		secret, err := h.svc.RotateWebhookSecret(rq.r.Context(), rq.ss.Merchant.ID, rq.r.PostFormValue("current_secret"), d)
		return developersData{NewSecret: secret}, err
	})
}

// issueSecret runs an action that makes a secret, once per form: a
// repeated submission makes no second secret and cannot show the first
// one again (only its hash or sealed copy is kept).
func (h *Handler) issueSecret(rq *request, action string, issue func(time.Duration) (developersData, error)) error {
	d, err := formOverlap(rq)
	if err != nil {
		return h.developersError(rq, err)
	}
	replay, finish, err := h.once(rq, action, d.String())
	if err != nil {
		return h.developersError(rq, err)
	}
	if replay != nil {
		return h.renderDevelopers(rq, http.StatusOK, view{Notice: "This form was already sent: the secret it made was shown once and is not shown again."}, developersData{})
	}
	data, err := issue(d)
	if err != nil {
		failed(finish, err)
		return h.developersError(rq, err)
	}
	finish(http.StatusCreated, nil)
	return h.renderDevelopers(rq, http.StatusOK, view{Notice: "Done. Copy the new secret now: it is shown only once."}, data)
}

// resendWebhook queues one of the merchant's deliveries again.
func (h *Handler) resendWebhook(rq *request) error {
	if err := h.svc.ResendMerchantWebhook(rq.r.Context(), rq.ss.Merchant, rq.r.PathValue("id")); err != nil {
		return h.developersError(rq, err)
	}
	return rq.redirect("/dashboard/developers?done=resent")
}

// developersError shows a refusal on the page; other errors fail.
func (h *Handler) developersError(rq *request, err error) error {
	e := paylink.AsError(err)
	if e.Kind != paylink.KindInvalid && e.Kind != paylink.KindConflict {
		return err
	}
	return h.renderDevelopers(rq, httpx.Status(e.Kind), view{Error: errorText(e), Fields: e.Fields}, developersData{})
}
