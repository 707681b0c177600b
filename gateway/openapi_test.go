package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// specFile is the OpenAPI description of every JSON endpoint.
const specFile = "../docs/openapi.yaml"

// apiChecker sends requests to a running Caddy and validates each request
// and its answer against the description, noting which operations and
// status codes were seen.
type apiChecker struct {
	t    *testing.T
	doc  *openapi3.T
	seen map[string]bool // "operationId status"
}

func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(specFile)
	if err != nil {
		t.Fatalf("loading %s: %v", specFile, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s is not a valid OpenAPI description: %v", specFile, err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("%s is OpenAPI %s, want 3.1", specFile, doc.OpenAPI)
	}
	return doc
}

// do sends method to origin+path through client, where template is the
// description's path and params its path parameters, and validates both
// ways. It returns the status and the body.
func (c *apiChecker) do(client *http.Client, method, origin, path, template string, params map[string]string, body string, header ...string) (int, string) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, origin+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	item := c.doc.Paths.Find(template)
	if item == nil {
		c.t.Fatalf("%s is not in the description", template)
	}
	op := item.GetOperation(method)
	if op == nil {
		c.t.Fatalf("%s %s is not in the description", method, template)
	}
	route := &routers.Route{Spec: c.doc, Path: template, PathItem: item, Method: method, Operation: op}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if body != "" {
		// The request is checked too, so the description's bodies are
		// what the server takes; a bad one is sent on purpose when the
		// answer is a 4xx.
		check := *req
		check.Body = io.NopCloser(strings.NewReader(body))
		in.Request = &check
	}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	resp, err := client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if reqErr != nil && resp.StatusCode < 400 {
		c.t.Errorf("%s %s was accepted (%d) but the description refuses the request: %v", method, path, resp.StatusCode, reqErr)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	out.SetBodyBytes(data)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		c.t.Errorf("%s %s answered %d %s\nwhich the description does not allow: %v", method, path, resp.StatusCode, data, err)
	}
	c.seen[op.OperationID+" "+strconv.Itoa(resp.StatusCode)] = true
	return resp.StatusCode, string(data)
}

func jarClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// TestOpenAPIDescribesTheLiveServer: every JSON endpoint of a running Caddy,
// for fans, apps, origins and operators, answers as docs/openapi.yaml says:
// each answer, errors included, is validated against the description with
// kin-openapi, and every operation the description lists is exercised.
func TestOpenAPIDescribesTheLiveServer(t *testing.T) {
	doc := loadSpec(t)
	c := &apiChecker{t: t, doc: doc, seen: map[string]bool{}}
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	newCaddy(t, caddyConfig(t.TempDir(), `
	http://localhost:9080 {
		waiting_room {
			room api
			total_active_users 1
		}
		respond "origin"
	}
	http://127.0.0.1:9080 {
		waiting_room {
			room api-draw
			challenge pow 8
			prequeue_start 2020-01-01T00:00:00Z
			event_start `+start+`
			shuffle_at_event_start
		}
		respond "origin"
	}`))
	site := base
	drawSite := "http://127.0.0.1:" + strconv.Itoa(sitePort)
	admin := http.DefaultClient
	fan := func(client *http.Client, origin, path, template string) (int, string) {
		return c.do(client, http.MethodGet, origin, path, template, nil, "", "Accept", "application/json")
	}

	// A fan let straight in, a second who waits.
	first, second := jarClient(t), jarClient(t)
	if code, body := fan(first, site, "/_waiting-room/status", "/_waiting-room/status"); code != 200 || !strings.Contains(body, `"admitted"`) {
		t.Fatalf("first fan: %d %s", code, body)
	}
	if code, body := fan(second, site, "/_waiting-room/status", "/_waiting-room/status"); code != 200 || !strings.Contains(body, `"queued"`) {
		t.Fatalf("second fan: %d %s", code, body)
	}
	fan(second, site, "/_waiting-room/draw", "/_waiting-room/draw")
	fan(second, site, "/_waiting-room/jwks.json", "/_waiting-room/jwks.json")
	if code, _ := fan(second, site, "/_waiting-room/fairness", "/_waiting-room/fairness"); code != 404 {
		t.Errorf("fairness of an open room: %d, want 404", code)
	}

	// The pre-queue with a draw, behind a proof of work.
	pow := jarClient(t)
	code, body := fan(pow, drawSite, "/_waiting-room/status", "/_waiting-room/status")
	var offer powStatus
	if err := json.Unmarshal([]byte(body), &offer); code != 200 || err != nil || offer.Challenge == nil {
		t.Fatalf("pow room: %d %s, want a challenge", code, body)
	}
	c.do(pow, http.MethodPost, drawSite, "/_waiting-room/join", "/_waiting-room/join", nil, `{"seed": 1}`)
	c.do(pow, http.MethodPost, drawSite, "/_waiting-room/join", "/_waiting-room/join", nil, `{"seed": "AAAA", "nonce": "1"}`)
	nonce := contractFind(t, offer.Challenge.Seed, func(z int) bool { return z >= offer.Challenge.Bits })
	code, body = c.do(pow, http.MethodPost, drawSite, "/_waiting-room/join", "/_waiting-room/join", nil,
		fmt.Sprintf(`{"seed": %q, "nonce": %q}`, offer.Challenge.Seed, nonce))
	if code != 200 || !strings.Contains(body, `"prequeue"`) {
		t.Fatalf("answered join: %d %s, want a place in the pre-queue", code, body)
	}
	if code, body := fan(pow, drawSite, "/_waiting-room/draw", "/_waiting-room/draw"); code != 200 || !strings.Contains(body, `"commitment"`) {
		t.Fatalf("draw: %d %s, want its commitment", code, body)
	}

	// The admin API: reads, changes, refusals.
	room := map[string]string{"room": "api"}
	adm := func(method, path, template string, params map[string]string, body string) (int, string) {
		return c.do(admin, method, adminBase, path, template, params, body)
	}
	adm(http.MethodGet, "/waiting-room/", "/waiting-room/", nil, "")
	adm(http.MethodGet, "/waiting-room/api", "/waiting-room/{room}", room, "")
	adm(http.MethodGet, "/waiting-room/nope", "/waiting-room/{room}", map[string]string{"room": "nope"}, "")
	adm(http.MethodPatch, "/waiting-room/api", "/waiting-room/{room}", room, `{"title": "API night", "new_users_per_minute": 120, "session_duration": "5m", "join_limit": "20/m burst 40", "challenge": "off"}`)
	adm(http.MethodPatch, "/waiting-room/api", "/waiting-room/{room}", room, `{"colour": "blue"}`)
	adm(http.MethodPatch, "/waiting-room/api", "/waiting-room/{room}", room, `{"total_active_users": "many"}`)
	for _, action := range []string{"pause", "resume", "sold-out"} {
		p := map[string]string{"room": "api", "action": action}
		if code, body := adm(http.MethodPost, "/waiting-room/api/"+action, "/waiting-room/{room}/{action}", p, ""); code != 200 {
			t.Fatalf("%s: %d %s", action, code, body)
		}
	}
	adm(http.MethodPost, "/waiting-room/nope/pause", "/waiting-room/{room}/{action}", map[string]string{"room": "nope", "action": "pause"}, "")
	adm(http.MethodGet, "/waiting-room/api/supply", "/waiting-room/{room}/supply", room, "")
	adm(http.MethodPost, "/waiting-room/api/supply", "/waiting-room/{room}/supply", room, `{"units": -1}`)
	if code, body := adm(http.MethodPost, "/waiting-room/api/supply", "/waiting-room/{room}/supply", room, `{"units": 40, "reason": "box office"}`); code != 200 {
		t.Fatalf("setting the supply: %d %s", code, body)
	}
	fan(second, site, "/_waiting-room/status", "/_waiting-room/status") // told an outcome now

	// Sold out: the fairness report is published (once the room's view has
	// it, within a refresh).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		code, _ := fan(second, site, "/_waiting-room/fairness", "/_waiting-room/fairness")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fairness report 10 s after the sell-out: %d", code)
		}
	}
	fan(second, site, "/_waiting-room/status", "/_waiting-room/status")
	adm(http.MethodPost, "/waiting-room/api/reopen", "/waiting-room/{room}/{action}", map[string]string{"room": "api", "action": "reopen"}, "")

	// Every operation of the description was exercised, and answered 200.
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			if !c.seen[op.OperationID+" 200"] {
				t.Errorf("%s %s (%s) was never answered 200 in this test", method, path, op.OperationID)
			}
		}
	}
	var seen []string
	for k := range c.seen {
		seen = append(seen, k)
	}
	slices.Sort(seen)
	t.Logf("validated: %s", strings.Join(seen, ", "))
}
