package paylink

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// AcquirerRecord is one line of an acquirer's settlement file: a capture
// or refund it settled, in minor units of Currency.
type AcquirerRecord struct {
	Line      int    // line number in the file, for error messages; 0 when built
	Date      string // YYYY-MM-DD (UTC) the acquirer settled it
	Reference string // purchase reference of a capture, refund reference of a refund
	Type      string // "capture" or "refund"
	Currency  string
	Amount    int64
}

// Acquirer record types.
const (
	RecordCapture = "capture"
	RecordRefund  = "refund"
)

// settlementFileHeader is the sandbox acquirer's file layout.
var settlementFileHeader = []string{"date", "reference", "type", "currency", "amount"}

// WriteSettlementFile writes records as the sandbox acquirer's CSV
// settlement file: a header row, then one row per record with amounts as
// decimals in major units.
func WriteSettlementFile(w io.Writer, records []AcquirerRecord) error {
	cw := csv.NewWriter(w)
	cw.Write(settlementFileHeader)
	for _, r := range records {
		cw.Write([]string{r.Date, r.Reference, r.Type, r.Currency, FormatIn(r.Amount, r.Currency)})
	}
	cw.Flush()
	return cw.Error()
}

// ParseSettlementFile reads an acquirer settlement file: CSV with a
// header row naming at least date, reference, currency and amount (type
// optional), in any order, and every line with as many fields as the
// header. An error names the line at fault.
func ParseSettlementFile(r io.Reader) ([]AcquirerRecord, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, Errorf(KindInvalid, CodeInvalidRequest, "settlement file line 1: no header row: %v", err)
	}
	col := map[string]int{}
	for i, h := range head {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff") // the byte order mark spreadsheets write
		}
		name := strings.ToLower(strings.TrimSpace(h))
		if _, twice := col[name]; twice && name != "" {
			return nil, Errorf(KindInvalid, CodeInvalidRequest, "settlement file line 1: the header names %q twice", name)
		}
		col[name] = i
	}
	for _, need := range []string{"date", "reference", "currency", "amount"} {
		if _, ok := col[need]; !ok {
			return nil, Errorf(KindInvalid, CodeInvalidRequest, "settlement file line 1: the header has no %q column", need)
		}
	}
	var out []AcquirerRecord
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) && len(out) == 0 {
			return nil, Errorf(KindInvalid, CodeInvalidRequest, "settlement file: no lines after the header (a truncated file?)")
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, Errorf(KindInvalid, CodeInvalidRequest, "settlement file line %d: %v", line, err)
		}
		if len(rec) != len(head) {
			return nil, Errorf(KindInvalid, CodeInvalidRequest, "settlement file line %d has %d fields, the header names %d", line, len(rec), len(head))
		}
		r, err := parseRecord(rec, col, line)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
}

func parseRecord(rec []string, col map[string]int, line int) (AcquirerRecord, error) {
	field := func(name string) string {
		if i, ok := col[name]; ok {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	bad := func(format string, args ...any) (AcquirerRecord, error) {
		return AcquirerRecord{}, Errorf(KindInvalid, CodeInvalidRequest, "settlement file line %d: %s", line, fmt.Sprintf(format, args...))
	}
	r := AcquirerRecord{Line: line, Date: field("date"), Reference: field("reference"), Type: field("type"), Currency: field("currency")}
	if _, err := ParseDay(r.Date); err != nil {
		return bad("date %q is not YYYY-MM-DD", r.Date)
	}
	if r.Reference == "" || CheckText(r.Reference, MaxInvoiceLength) != nil {
		return bad("reference is empty, too long, or not one line of text")
	}
	cur, ok := LookupCurrency(r.Currency)
	if !ok {
		return bad("unknown currency %q", r.Currency)
	}
	r.Currency = cur.Code
	amount, err := ParseTotal(field("amount"), cur)
	if err != nil {
		return bad("amount: %v", err)
	}
	r.Amount = amount
	return r, nil
}

// Variance kinds.
const (
	VarianceMissingInLedger = "missing_in_ledger" // the acquirer settled it, the ledger has no such posting
	VarianceMissingInFile   = "missing_in_file"   // posted in the ledger, absent from the file
	VarianceAmount          = "amount_differs"    // both have it, for different amounts
	VarianceCurrency        = "currency_differs"  // both have it, in different currencies
	VarianceDuplicate       = "duplicate_in_file" // the file names a reference a line before it already did
)

// Variance is one disagreement between a settlement file and the ledger.
// Each side's amount is in that side's own currency; a side without the
// operation has no currency and no amount: the file for
// missing_in_file, the ledger for missing_in_ledger and
// duplicate_in_file (whose first line the posting already answered).
type Variance struct {
	Kind      string
	Reference string
	// MerchantID is the merchant of the payment or refund Reference
	// names, "" when it names none (a line of an unknown reference).
	MerchantID     string
	FileCurrency   string
	FileAmount     int64
	LedgerCurrency string
	LedgerAmount   int64
	Line           int // the file line, 0 for missing_in_file
}

// Reconciliation is the result of matching one file against the ledger.
type Reconciliation struct {
	ID        string
	FileName  string
	Days      []string
	Matched   int
	Variances []Variance
	CreatedAt time.Time
}

// AcquirerSettlement is what the sandbox acquirer settled on a UTC day:
// every card and wallet payment it captured and every refund it paid
// that day, read from the payment records (not from the ledger, which
// reconciliation checks against it).
func (s *Service) AcquirerSettlement(ctx context.Context, day string) ([]AcquirerRecord, error) {
	start, err := dayStart(day)
	if err != nil {
		return nil, err
	}
	var out []AcquirerRecord
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.AcquirerActivity(start, start.AddDate(0, 0, 1))
		return err
	})
	if err != nil {
		return nil, Internal("acquirer settlement", err)
	}
	for i := range out {
		out[i].Date = day
	}
	return out, nil
}

func dayStart(day string) (time.Time, error) {
	if _, err := ParseDay(day); err != nil {
		return time.Time{}, err
	}
	t, _ := time.Parse(time.DateOnly, day)
	return t.UTC(), nil
}

// Reconcile matches a settlement file against the ledger's card and
// wallet postings of the days the file covers, stores the result with
// every variance for review, and returns it.
func (s *Service) Reconcile(ctx context.Context, fileName string, records []AcquirerRecord) (*Reconciliation, error) {
	rec := &Reconciliation{FileName: fileName, CreatedAt: s.now()}
	for _, r := range records {
		if !slices.Contains(rec.Days, r.Date) {
			rec.Days = append(rec.Days, r.Date)
		}
	}
	slices.Sort(rec.Days)
	ledger := map[string]*Posting{}
	var owners map[string]string
	err := s.store.Snapshot(ctx, func(tx Tx) error { // every day's postings as of one moment
		for _, day := range rec.Days {
			start, err := dayStart(day)
			if err != nil {
				return err
			}
			ps, err := tx.AcquirerPostings(start, start.AddDate(0, 0, 1))
			if err != nil {
				return err
			}
			for _, p := range ps {
				ledger[acquirerReference(p)] = p
			}
		}
		if err := postedOnOtherDays(tx, records, ledger); err != nil {
			return err
		}
		var err error
		owners, err = merchantsOf(tx, records, ledger)
		return err
	})
	if err != nil {
		return nil, asServiceError("reconcile", err)
	}
	rec.match(records, ledger, owners)
	id, err := s.reference("rc_")
	if err != nil {
		return nil, Internal("reconciliation id", err)
	}
	rec.ID = id
	if err := s.store.Update(ctx, func(tx Tx) error {
		if err := tx.CreateReconciliation(rec); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{Action: AuditReconcile, ObjectType: ObjectReconcile, ObjectID: rec.ID,
			Outcome: OutcomeSuccess, Detail: rec.auditDetail()})
	}); err != nil {
		return nil, Internal("store reconciliation", err)
	}
	return rec, nil
}

// auditDetail is a run's audit detail: what it matched and found, and
// the days its file covered ("matched=4 variances=1 days=1 from=2026-01-02
// to=2026-01-02"; no days for an empty file).
func (rec *Reconciliation) auditDetail() string {
	d := fmt.Sprintf("matched=%d variances=%d days=%d", rec.Matched, len(rec.Variances), len(rec.Days))
	if len(rec.Days) > 0 {
		d += fmt.Sprintf(" from=%s to=%s", rec.Days[0], rec.Days[len(rec.Days)-1])
	}
	return d
}

// postedOnOtherDays adds to ledger the postings of the file's references
// that were posted on a day the file does not cover: a payment approved
// just before midnight and posted just after it, a refund asked for on
// one day and approved on a later one (a slow processor, recovery). A
// line matches its operation's posting whatever the day; a posting of the
// file's days that the file does not name is still missing_in_file.
func postedOnOtherDays(tx Tx, records []AcquirerRecord, ledger map[string]*Posting) error {
	for _, r := range records {
		if _, ok := ledger[r.Reference]; ok {
			continue
		}
		p, err := tx.AcquirerPostingOf(r.Reference)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		ledger[r.Reference] = p
	}
	return nil
}

// merchantsOf finds the merchant of each reference the file names: its
// posting's, or, for a reference with no posting, the merchant of the
// payment or refund it names ("" for none), so that a variance shows on
// its merchant's dashboard and nowhere else.
func merchantsOf(tx Tx, records []AcquirerRecord, ledger map[string]*Posting) (map[string]string, error) {
	owners := map[string]string{}
	for _, r := range records {
		if _, ok := owners[r.Reference]; ok {
			continue
		}
		if p, ok := ledger[r.Reference]; ok {
			owners[r.Reference] = p.MerchantID
			continue
		}
		m, err := tx.MerchantOfReference(r.Reference)
		if err != nil {
			return nil, err
		}
		owners[r.Reference] = m
	}
	return owners, nil
}

// acquirerReference is how the acquirer names a posting's operation.
func acquirerReference(p *Posting) string {
	if p.RefundReference != "" {
		return p.RefundReference
	}
	return p.Reference
}

// fileAmount is what a file line says was moved for posting p: a refund
// may be written as a negative amount, the sign acquirers' files often
// give money going back to the cardholder; a charge's sign is kept.
func fileAmount(r AcquirerRecord, p *Posting) int64 {
	if p.RefundReference != "" {
		return abs(r.Amount)
	}
	return r.Amount
}

// match pairs file records with ledger postings by reference; owners
// names the merchant of each record's reference.
func (rec *Reconciliation) match(records []AcquirerRecord, ledger map[string]*Posting, owners map[string]string) {
	seen := map[string]bool{}
	for _, r := range records {
		v := Variance{Reference: r.Reference, MerchantID: owners[r.Reference], FileCurrency: r.Currency, FileAmount: r.Amount, Line: r.Line}
		p, ok := ledger[r.Reference]
		switch {
		case seen[r.Reference]:
			v.Kind = VarianceDuplicate
		case !ok:
			v.Kind = VarianceMissingInLedger
		case p.Currency != r.Currency:
			v.Kind, v.LedgerCurrency, v.LedgerAmount = VarianceCurrency, p.Currency, abs(p.Amount)
		case abs(p.Amount) != fileAmount(r, p):
			v.Kind, v.LedgerCurrency, v.LedgerAmount = VarianceAmount, p.Currency, abs(p.Amount)
		default:
			rec.Matched++
		}
		seen[r.Reference] = true
		delete(ledger, r.Reference)
		if v.Kind != "" {
			rec.Variances = append(rec.Variances, v)
		}
	}
	var missing []Variance
	for ref, p := range ledger {
		missing = append(missing, Variance{Kind: VarianceMissingInFile, Reference: ref, MerchantID: p.MerchantID,
			LedgerCurrency: p.Currency, LedgerAmount: abs(p.Amount)})
	}
	slices.SortFunc(missing, func(a, b Variance) int { return strings.Compare(a.Reference, b.Reference) })
	rec.Variances = append(rec.Variances, missing...)
}

// Page sizes of the reconciliation list.
const (
	DefaultReconciliations = 20
	MaxReconciliations     = 200
)

// Reconciliations lists the latest reconciliation runs, newest first,
// each with every variance it found, for the operator's review. limit is
// 1 to MaxReconciliations, 0 for DefaultReconciliations.
func (s *Service) Reconciliations(ctx context.Context, limit int) ([]*Reconciliation, error) {
	fe := FieldErrors{}
	if limit = pageSize(limit, DefaultReconciliations, MaxReconciliations, fe); fe.Err() != nil {
		return nil, fe.Err()
	}
	var out []*Reconciliation
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.Reconciliations(limit)
		return err
	})
	if err != nil {
		return nil, Internal("list reconciliations", err)
	}
	return out, nil
}

// RunVariance is a variance with the run that found it.
type RunVariance struct {
	Variance
	Run, File string
	At        time.Time
}

// Page sizes of a merchant's variances.
const (
	DefaultMerchantVariances = 100
	MaxMerchantVariances     = 500
)

// MerchantVariances lists the newest variances of m's payments and
// refunds, newest run first, each run's in the order found. limit is 1
// to MaxMerchantVariances, 0 for DefaultMerchantVariances.
// Runs are platform-level, one acquirer file covering every merchant: a
// variance is m's when the payment or refund its reference names is m's,
// and one whose reference is no merchant's is never listed.
func (s *Service) MerchantVariances(ctx context.Context, m *Merchant, limit int) ([]RunVariance, error) {
	fe := FieldErrors{}
	if limit = pageSize(limit, DefaultMerchantVariances, MaxMerchantVariances, fe); fe.Err() != nil {
		return nil, fe.Err()
	}
	var out []RunVariance
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.MerchantVariances(m.ID, limit)
		return err
	})
	if err != nil {
		return nil, Internal("merchant variances", err)
	}
	return out, nil
}
