package paylink

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"time"
)

// TOTP (RFC 6238) with the parameters every authenticator app supports:
// HMAC-SHA1, 6 digits, 30-second steps, a 160-bit secret. It is small
// and stdlib-only, so it lives beside the sign-in rules it serves.

// TOTP parameters.
const (
	totpStep    = 30 * time.Second
	totpDigits  = 6
	totpModulus = 1_000_000 // 10^totpDigits
	// totpSkew accepts the codes of one step before and after now, for
	// clocks that drift and codes typed slowly.
	totpSkew = 1
)

// totpEncoding is base32 without padding, as otpauth URIs use.
var totpEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// totpCode is the RFC 4226 HOTP value of secret at counter.
func totpCode(secret []byte, counter uint64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	mac := hmac.New(sha1.New, secret)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%0*d", totpDigits, v%totpModulus)
}

// TOTPCode is the code of secret at t, what an authenticator app shows:
// tests in other packages sign in with it.
func TOTPCode(secret []byte, t time.Time) string {
	return totpCode(secret, uint64(t.Unix())/uint64(totpStep/time.Second))
}

// totpMatch returns the time step whose code is code, looking at now's
// step and one either side, if that step is later than after (the step
// of the last code accepted for the user): a code is accepted once (RFC
// 6238, section 5.2). Codes are compared in constant time.
func totpMatch(secret []byte, code string, now time.Time, after int64) (int64, bool) {
	step := now.Unix() / int64(totpStep/time.Second)
	var found int64
	for d := int64(-totpSkew); d <= totpSkew; d++ {
		if hmac.Equal([]byte(totpCode(secret, uint64(step+d))), []byte(code)) && step+d > after {
			found = step + d
		}
	}
	return found, found != 0
}

// TOTPURI is the otpauth URI an authenticator app reads (from a QR code
// or typed in), labelled with the issuer and the user's email.
func TOTPURI(secret []byte, issuer, email string) string {
	v := url.Values{"secret": {totpEncoding.EncodeToString(secret)}, "issuer": {issuer},
		"algorithm": {"SHA1"}, "digits": {"6"}, "period": {"30"}}
	return "otpauth://totp/" + url.PathEscape(issuer+":"+email) + "?" + v.Encode()
}

// TOTPSecretText is the secret as people type it into an app: base32.
func TOTPSecretText(secret []byte) string { return totpEncoding.EncodeToString(secret) }
