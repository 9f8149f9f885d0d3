package passwords

import (
	"strings"
	"testing"
)

func TestHashAndVerify(t *testing.T) {
	h := Argon2id{P: Params{Time: 1, Memory: 1024, Threads: 1}}
	enc, err := h.Hash("correct staple battery horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=1024,t=1,p=1$") || strings.Contains(enc, "horse") {
		t.Fatalf("encoded hash %q: want an argon2id PHC string without the password", enc)
	}
	again, _ := h.Hash("correct staple battery horse")
	if again == enc {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	tests := []struct {
		name     string
		encoded  string
		password string
		want     bool
		wantErr  bool
	}{
		{"right password", enc, "correct staple battery horse", true, false},
		{"wrong password", enc, "correct staple battery hors", false, false},
		{"no hash (unknown user)", "", "anything at all", false, false},
		{"not a PHC string", "$2a$10$abcdef", "x", false, true},
		{"other version", strings.Replace(enc, "v=19", "v=16", 1), "correct staple battery horse", false, true},
		{"bad salt", "$argon2id$v=19$m=1024,t=1,p=1$!!$AAAA", "x", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.Verify(tt.encoded, tt.password)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("got %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestVerifyUsesTheStoredParameters(t *testing.T) {
	old := Argon2id{P: Params{Time: 1, Memory: 1024, Threads: 1}}
	enc, err := old.Hash("correct staple battery horse")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := New().Verify(enc, "correct staple battery horse"); !ok || err != nil {
		t.Errorf("a hash made with older parameters: got %v, %v, want it to verify", ok, err)
	}
}
