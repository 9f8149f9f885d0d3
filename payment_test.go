package paylink

import "testing"

func TestStateMachine(t *testing.T) {
	tests := []struct {
		from, to Status
		ok       bool
	}{
		{StatusProcessing, StatusApproved, true},
		{StatusProcessing, StatusPending, true},
		{StatusRequiresAuthentication, StatusDeclined, true},
		{StatusPreAuthorised, StatusProcessing, true},
		{StatusProcessing, StatusPreAuthorisedReversed, true},
		{StatusPending, StatusApproved, true},
		{StatusApproved, StatusPreAuthorised, false},
		{StatusApproved, StatusDeclined, false},
		{StatusDeclined, StatusApproved, false},
		{StatusFailed, StatusProcessing, false},
		{StatusPreAuthorisedReversed, StatusApproved, false},
		{StatusPending, StatusPreAuthorised, false},
	}
	for _, tt := range tests {
		if got := CanTransition(tt.from, tt.to); got != tt.ok {
			t.Errorf("%s -> %s: got %v, want %v", tt.from, tt.to, got, tt.ok)
		}
	}
}

func TestSaveRefusesAMoveOutsideTheStateMachine(t *testing.T) {
	s, err := NewService(Config{}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transaction{Reference: "pr_x", Status: StatusPreAuthorised}
	// The check comes before any write, so no store is needed to see it refuse.
	err = s.save(nil, tr, StatusDeclined)
	if e := AsError(err); err == nil || e.Kind != KindInternal {
		t.Fatalf("DECLINED -> PRE_AUTHORISED: got %v, want an internal error (a bug)", err)
	}
}
