package booking

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Body size limits. A hold names at most a handful of seats; a venue
// description is bigger but still small.
const (
	maxBody      = 16 << 10
	maxAdminBody = 1 << 20
	maxWebhook   = 64 << 10
)

// readBody reads the whole body up to limit, or fails with KindTooLarge.
// It reads at most limit+1 bytes and leaves the rest to DrainBody: unlike
// http.MaxBytesReader it does not make the server drop the connection with
// the body unread, which a proxy in front reports as a 502.
func readBody(_ http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, Errorf(KindTooLarge, CodeBodyTooLarge, "the request body is over %d bytes", limit)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, Errorf(KindInvalid, CodeInvalidRequest, "the request body could not be read")
	}
	if int64(len(body)) > limit {
		return nil, Errorf(KindTooLarge, CodeBodyTooLarge, "the request body is over %d bytes", limit)
	}
	return body, nil
}

// decodeStrict parses one JSON object into dst: unknown fields, wrong types,
// trailing data and an empty body are all refused with a message that says
// which.
func decodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return Errorf(KindInvalid, CodeInvalidJSON, "the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return Errorf(KindInvalid, CodeInvalidJSON, "%s", describeJSONError(err))
	}
	if dec.More() {
		return Errorf(KindInvalid, CodeInvalidJSON, "the request body must hold one JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return Errorf(KindInvalid, CodeInvalidJSON, "the request body must hold one JSON object")
	}
	return nil
}

func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field != "" {
			return fmt.Sprintf("field %q must be %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()))
		}
		return "the request body must be a JSON object"
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("malformed JSON at byte %d", syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends too early"
	}
	// Unknown fields and our own UnmarshalJSON errors have useful text.
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "of another type"
}
