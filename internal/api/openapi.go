package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/paylink/paylink/docs"
)

// openAPIJSON converts the embedded docs/openapi.yaml to JSON once, at
// start-up, so that the served description is the checked one and never
// a second copy that could drift.
func openAPIJSON() ([]byte, error) {
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load embedded openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("embedded openapi.yaml: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml to JSON: %w", err)
	}
	return append(b, '\n'), nil
}
