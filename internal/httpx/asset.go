package httpx

import (
	"crypto/sha256"
	"encoding/hex"
)

// AssetVersion is the digest of an asset's content that pages name in
// its address (?v=), so that a page loads the asset of the build that
// rendered it, not one a browser kept from an earlier build.
func AssetVersion(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:6])
}

// AssetCacheControl is the Cache-Control of an asset of version current
// asked for at an address naming version asked: kept a year, unchanged,
// when they match; not stored when they differ, since the address is
// another build's (its page was rendered by an older or newer instance
// during an upgrade, and this instance's asset must not be kept under
// it); an hour when the address names none (a page of a build before
// versioned addresses).
func AssetCacheControl(asked, current string) string {
	switch asked {
	case "":
		return "public, max-age=3600"
	case current:
		return "public, max-age=31536000, immutable"
	}
	return "no-store"
}
