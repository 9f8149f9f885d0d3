// Package docs embeds the documents the running service serves itself:
// the OpenAPI description behind GET /v5/openapi.json.
package docs

import _ "embed"

// OpenAPIYAML is docs/openapi.yaml, the one OpenAPI description; the
// API converts it to JSON at start-up.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
