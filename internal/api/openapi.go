package api

import (
	"fmt"

	"github.com/oasdiff/yaml"

	"github.com/paylink/paylink/docs"
)

// openAPIJSON converts the embedded docs/openapi.yaml to JSON once, at
// start-up, so that the served description is the checked one and never
// a second copy that could drift. It only converts: the description is
// validated by the tests (openapi_test.go), so the binary does not link
// an OpenAPI validator, whose JSON-schema package alone took 150 ms of
// start-up compiling its meta-schemas.
func openAPIJSON() ([]byte, error) {
	b, err := yaml.YAMLToJSON(docs.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("embedded openapi.yaml to JSON: %w", err)
	}
	return append(b, '\n'), nil
}
