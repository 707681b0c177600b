package integration

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// What the tests read of the gateway's answers, as README documents them
// for origins and clients.
const (
	// passHeader carries the verified pass to the origin.
	passHeader = "X-Waiting-Room-Pass"
	// commandHeader is how the origin tells the gateway to end a session
	// ("revoke").
	commandHeader = "X-Waiting-Room-Command"
)

// errorBody is the JSON shape of every error the gateway answers.
type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// isWaitingPage tells the waiting page from the origin and other answers.
func isWaitingPage(body string) bool { return strings.Contains(body, `<main id="room"`) }

// adminCall sends one request to an admin API (gateway.StandaloneAdmin), as
// an operator's client would to Caddy's admin endpoint.
func adminCall(t *testing.T, admin http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	admin.ServeHTTP(rec, httptest.NewRequest(method, "http://localhost:2019"+path, strings.NewReader(body)))
	return rec
}

// adminOK fails the test unless the admin API answered 200 with a JSON body.
func adminOK(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusOK || !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("got %d %s, want 200 and the room's view", rec.Code, rec.Body)
	}
}

// adminError is the error the admin API answered, which must be the JSON
// {"error", "message"} of every error the gateway answers.
func adminError(t *testing.T, rec *httptest.ResponseRecorder) errorBody {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error answered as %q: %s", ct, rec.Body)
	}
	var e errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" || e.Message == "" {
		t.Fatalf("error body %s is not {\"error\", \"message\"}", rec.Body)
	}
	return e
}
