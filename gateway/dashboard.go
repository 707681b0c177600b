package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/static"
	"github.com/foyer-dev/foyer/waitingroom"
)

func init() {
	caddy.RegisterModule(Dashboard{})
	httpcaddyfile.RegisterHandlerDirective("waiting_room_dashboard", parseDashboardCaddyfile)
	// Where Caddy's own metrics handler goes: a terminal handler among the
	// others that answer (respond, reverse_proxy), so that basic_auth and the
	// rest of the request's middleware run first.
	httpcaddyfile.RegisterDirectiveOrder("waiting_room_dashboard", httpcaddyfile.After, "metrics")
}

// Dashboard is the waiting_room_dashboard handler: a live page showing every
// waiting room of this process, served on a route of the operator's choice
// (normally behind basic_auth), the way Caddy's metrics handler is. It is a
// page for people, so it cannot live on the admin endpoint, which refuses a
// browser's navigation.
//
// On the route it answers GET and HEAD only:
//
//	<route>                  the page (HTML, its script and style inline)
//	<route>?format=json      the same figures and the last hour's samples
//	<route>?format=events    a stream (text/event-stream) of them, every second
//	<route>?format=csv       a room's whole sale (dashboardcsv.go)
//	<route>?format=preview   a room's pages as fans see them (preview.go)
//
// Everything comes from what the node already keeps: each room's view of its
// store, refreshed twice a second for status polls, and a history the node
// samples from that view every second. A viewer costs the store nothing.
type Dashboard struct {
	node    string
	sampler *sampler
	rooms   roomSource
	// handlerOf finds the handler that serves a live room, for previews.
	handlerOf func(*waitingroom.Room) *Handler
	ctx       context.Context
	logger    *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Dashboard) CaddyModule() caddy.ModuleInfo {
	return moduleInfo[Dashboard]("http.handlers.waiting_room_dashboard")
}

// Provision joins the process's sampler, starting it if this is the first
// dashboard.
func (d *Dashboard) Provision(ctx caddy.Context) error {
	d.ctx, d.logger = ctx, ctx.Logger(d)
	d.rooms, d.handlerOf = liveRooms, handlerOf
	d.node, _ = os.Hostname()
	s, err := acquireSampler()
	if err != nil {
		return err
	}
	d.sampler = s
	return nil
}

// Cleanup lets go of the sampler; a reload's new dashboard has taken it by
// then, so the history carries over.
func (d *Dashboard) Cleanup() error {
	if d.sampler == nil {
		return nil
	}
	d.sampler = nil
	return releaseSampler()
}

// ServeHTTP answers the page, its JSON or its stream. It is terminal: next is
// never called.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if !allowMethod(w, r, http.MethodGet) {
		return nil
	}
	switch f := r.URL.Query().Get("format"); f {
	case "", "html":
		return d.page(w)
	case "json":
		return writeJSON(w, http.StatusOK, d.payload(nil, true))
	case "events":
		return d.stream(w, r)
	case "csv":
		return d.csv(w, r)
	case "preview":
		return d.previews(w, r)
	default:
		return writeError(w, http.StatusBadRequest, "unknown_format", "format "+strconv.Quote(f)+" is not one of html, json, events, csv and preview")
	}
}

// payload reads every live room, with the samples newer than after holds
// for each (nil: the whole history) when history is set.
func (d *Dashboard) payload(after map[string]int64, history bool) dashPayload {
	at := now()
	p := dashPayload{Node: d.node, At: at.UTC().Truncate(time.Millisecond), Rooms: []dashRoom{}}
	for _, lr := range d.rooms() {
		var hist []dashSample
		if history && d.sampler != nil {
			hist = d.sampler.historyOf(lr.id, after[lr.id])
		}
		p.Rooms = append(p.Rooms, newDashRoom(lr, at, hist))
	}
	return p
}

// dashPage is what the page template is given.
type dashPage struct {
	dashPayload
	Columns []string
	Nonce   string
	Script  template.JS
	Style   template.CSS
}

var dashTemplate = template.Must(template.New("dashboard").Parse(static.DashboardPage))

func (d *Dashboard) page(w http.ResponseWriter) error {
	// The page is figures only: its script asks for the history.
	p := dashPage{dashPayload: d.payload(nil, false)}
	p.Columns = []string{"Room"}
	if len(p.Rooms) > 0 {
		for _, f := range p.Rooms[0].Figures {
			p.Columns = append(p.Columns, f.Label)
		}
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	p.Nonce = base64.RawStdEncoding.EncodeToString(nonce[:])
	p.Script, p.Style = template.JS(static.DashboardScript), template.CSS(static.DashboardStyle)
	var buf bytes.Buffer
	if err := dashTemplate.Execute(&buf, p); err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	// The page loads nothing from anywhere: it works offline, and an
	// injected script or remote resource would be refused.
	return writeOperatorPage(w, buf.Bytes(), "default-src 'none'; script-src 'nonce-"+p.Nonce+"'; style-src 'nonce-"+p.Nonce+"'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
}

// MaxDashboardStreams bounds the event streams open at once on a node, over
// every dashboard route. Each costs a goroutine and a payload built and sent
// every second; a dashboard mounted without basic_auth is open to anyone, who
// could otherwise open them by the thousand. Beyond it a viewer gets a 503
// with Retry-After; the page and its JSON still answer.
const MaxDashboardStreams = 64

// dashStreams counts the event streams open on this node.
var dashStreams = make(chan struct{}, MaxDashboardStreams)

// streamEvery is how often the stream sends: as often as the history gains
// a sample.
var streamEvery = fineStep

// stream sends the whole history first ("snapshot"), then every second the
// figures and the samples taken since ("update"), until the viewer leaves
// or the config is unloaded.
func (d *Dashboard) stream(w http.ResponseWriter, r *http.Request) error {
	select {
	case dashStreams <- struct{}{}:
		defer func() { <-dashStreams }()
	default:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
		return writeError(w, http.StatusServiceUnavailable, "too_many_viewers",
			"This node has "+strconv.Itoa(MaxDashboardStreams)+" dashboard streams open already; try again shortly.")
	}
	rc := http.NewResponseController(w)
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sent := map[string]int64{}
	send := func(event string, after map[string]int64) error {
		p := d.payload(after, true)
		for _, room := range p.Rooms {
			if n := len(room.History); n > 0 {
				sent[room.Room] = room.History[n-1].T
			}
		}
		body, err := json.Marshal(p)
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte("event: " + event + "\ndata: ")); err != nil {
			return err
		}
		if _, err := w.Write(append(body, '\n', '\n')); err != nil {
			return err
		}
		return rc.Flush()
	}
	// A viewer who reconnects gets the history again: the page replaces
	// what it had rather than guessing what it missed.
	if err := send("snapshot", nil); err != nil {
		return nil
	}
	var unloaded <-chan struct{}
	if d.ctx != nil {
		unloaded = d.ctx.Done()
	}
	t := time.NewTicker(streamEvery)
	defer t.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-unloaded:
			return nil
		case <-t.C:
		}
		if err := send("update", sent); err != nil {
			return nil // the viewer has gone
		}
	}
}

// parseDashboardCaddyfile reads the directive. Syntax:
//
//	waiting_room_dashboard [<matcher>]
func parseDashboardCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	d := new(Dashboard)
	err := d.UnmarshalCaddyfile(h.Dispenser)
	return d, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens: it takes no
// arguments and no block.
func (d *Dashboard) UnmarshalCaddyfile(disp *caddyfile.Dispenser) error {
	disp.Next() // the directive name
	if disp.NextArg() {
		return disp.ArgErr()
	}
	if disp.NextBlock(disp.Nesting()) {
		return disp.Errf("waiting_room_dashboard takes no settings; it shows every room of this node")
	}
	return nil
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Dashboard)(nil)
	_ caddy.CleanerUpper          = (*Dashboard)(nil)
	_ caddyhttp.MiddlewareHandler = (*Dashboard)(nil)
	_ caddyfile.Unmarshaler       = (*Dashboard)(nil)
)
