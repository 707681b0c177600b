package booking

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
)

// errorBody is the JSON of every error response.
type errorBody struct {
	Error   string   `json:"error"`
	Message string   `json:"message"`
	Seats   []string `json:"seats,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":"internal_error","message":"the response could not be encoded"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// reply answers with v as JSON; a handler returns what it returns, nil, as
// having answered.
func reply(w http.ResponseWriter, status int, v any) error {
	writeJSON(w, status, v)
	return nil
}

// writeError answers with the error's kind and code. Unclassified errors are
// logged and answered as a bare 500: their text may hold internals.
func writeError(w http.ResponseWriter, log *slog.Logger, err error) {
	var e *Error
	if !errors.As(err, &e) {
		log.Error("request failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: CodeInternal, Message: "something went wrong on our side"})
		return
	}
	if e.Kind == KindUnavailable {
		// The client may retry the same request unchanged; say when.
		w.Header().Set("Retry-After", strconv.Itoa(1))
		log.Warn("dependency unavailable", "error", err)
	}
	writeJSON(w, e.Kind.Status(), errorBody{Error: e.Code, Message: e.Message, Seats: e.Seats})
}

// jsonNotFound turns the mux's plain-text 404 and 405 answers into JSON
// errors, so every response under /api/ is JSON.
func jsonNotFound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&plainErrorWriter{ResponseWriter: w}, r)
	})
}

type plainErrorWriter struct {
	http.ResponseWriter
	swallow bool
}

func (w *plainErrorWriter) WriteHeader(code int) {
	if (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) &&
		w.Header().Get("Content-Type") == "text/plain; charset=utf-8" {
		w.swallow = true
		w.Header().Del("X-Content-Type-Options")
		body := errorBody{Error: CodeNotFound, Message: "no such endpoint"}
		if code == http.StatusMethodNotAllowed {
			body = errorBody{Error: "method_not_allowed", Message: "this endpoint does not take that method"}
		}
		writeJSON(w.ResponseWriter, code, body)
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *plainErrorWriter) Write(b []byte) (int, error) {
	if w.swallow {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
