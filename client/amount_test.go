package client_test

import (
	"encoding/json"
	"testing"

	"github.com/paylink/paylink/client"
)

// TestAmountDecodesStringsAndNumbers: an amount is its exact decimal text
// whether paylink sent it as a JSON string or a number; anything else
// is an error.
func TestAmountDecodesStringsAndNumbers(t *testing.T) {
	tests := []struct {
		in      string
		want    client.Amount
		wantErr bool
	}{
		{`"25.50"`, "25.50", false},
		{`"1029"`, "1029", false},
		{`30`, "30", false},
		{`10.419`, "10.419", false},
		{`0`, "0", false},
		{`null`, "", false},
		{`true`, "", true},
		{`{}`, "", true},
		{`"ten"`, "", true},
	}
	for _, tt := range tests {
		var got struct {
			A client.Amount `json:"a"`
		}
		err := json.Unmarshal([]byte(`{"a":`+tt.in+`}`), &got)
		if got.A != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("%s: got %q, %v; want %q, error %v", tt.in, got.A, err, tt.want, tt.wantErr)
		}
	}
}
