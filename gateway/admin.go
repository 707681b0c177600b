package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

func init() {
	caddy.RegisterModule(AdminAPI{})
}

// AdminAPI is the admin.api.waiting_room module: it shows the waiting rooms this
// process serves and changes their runtime settings on Caddy's admin endpoint.
//
//	GET   /waiting-room/                  every live room, with live stats
//	GET   /waiting-room/<room>            one room
//	PATCH /waiting-room/<room>            change runtime settings (a JSON object)
//	POST  /waiting-room/<room>/pause      stop admitting; waiting fans keep their place
//	POST  /waiting-room/<room>/resume     admit again
//	POST  /waiting-room/<room>/sold-out   show everyone the sold-out page
//	POST  /waiting-room/<room>/reopen     undo sold-out
//	GET   /waiting-room/<room>/audit      the room's audit trail (adminaudit.go)
//	POST  /waiting-room/<room>/codes      add access codes (admincodes.go)
//	GET   /waiting-room/<room>/codes      the codes' uses, as CSV
//	GET   /waiting-room/<room>/supply     the supply and its estimate (adminsupply.go)
//	POST  /waiting-room/<room>/supply     set the supply: {"units": N}
//
// A PATCH body may say why with "reason", an action's body with
// {"reason": "..."}: the audit trail keeps it with the change.
//
// Changes are kept in the room's store with a version, so every node sharing
// the store follows them within a second. Errors are JSON
// {"error": "<code>", "message": "..."}, like the rest of Foyer.
type AdminAPI struct {
	rooms  roomSource
	logger *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (AdminAPI) CaddyModule() caddy.ModuleInfo {
	return moduleInfo[AdminAPI]("admin.api.waiting_room")
}

// Provision sets up the module.
func (a *AdminAPI) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger(a)
	if a.rooms == nil {
		a.rooms = liveRooms
	}
	return nil
}

// adminPrefix is the root of the module's routes.
const adminPrefix = "/waiting-room/"

// Routes returns the module's routes on the admin endpoint.
func (a *AdminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: adminPrefix, Handler: caddy.AdminHandlerFunc(a.serve)}}
}

// Actions of POST /waiting-room/<room>/<action>: each is a one-setting PATCH.
var adminActions = map[string]func() waitingroom.Overrides{
	"pause": func() waitingroom.Overrides {
		return waitingroom.OverridesOf(waitingroom.Settings{Paused: true}, "paused")
	},
	"resume": func() waitingroom.Overrides {
		return waitingroom.OverridesOf(waitingroom.Settings{Paused: false}, "paused")
	},
	"sold-out": func() waitingroom.Overrides {
		return waitingroom.OverridesOf(waitingroom.Settings{SoldOut: true}, "sold_out")
	},
	"reopen": func() waitingroom.Overrides {
		return waitingroom.OverridesOf(waitingroom.Settings{SoldOut: false}, "sold_out")
	},
}

// serve routes a request. It writes its own answers, errors included, rather
// than returning a caddy.APIError, whose JSON is {"error": "<message>"}: the
// admin API speaks the same {"error", "message"} as the rest of Foyer.
func (a *AdminAPI) serve(w http.ResponseWriter, r *http.Request) error {
	if a.logger != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// A read changes nothing and comes every second from a status
		// loop or a scraper: debug, so it never floods an operator's log.
		// Changes are logged at info (see apply).
		a.logger.Debug("waiting room admin read", zap.String("method", r.Method), zap.String("path", r.URL.Path))
	}
	rest, _ := strings.CutPrefix(r.URL.Path, adminPrefix)
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	switch {
	case rest == "":
		if !allowMethod(w, r, http.MethodGet) {
			return nil
		}
		return a.list(w)
	case len(parts) == 1:
		if !allowMethod(w, r, http.MethodGet, http.MethodPatch) {
			return nil
		}
		lr, ok := a.find(w, parts[0])
		if !ok {
			return nil
		}
		if r.Method == http.MethodPatch {
			return a.patch(w, r, lr)
		}
		return a.show(w, http.StatusOK, lr)
	case len(parts) == 2 && (parts[1] == "audit" || parts[1] == "key-rotation"):
		method := map[string]string{"audit": http.MethodGet, "key-rotation": http.MethodPost}[parts[1]]
		if !allowMethod(w, r, method) {
			return nil
		}
		lr, ok := a.find(w, parts[0])
		if !ok {
			return nil
		}
		if parts[1] == "audit" {
			return a.showAudit(w, r, lr)
		}
		return a.recordKeyRotation(w, r, lr)
	case len(parts) == 2 && (parts[1] == "codes" || parts[1] == supplyRoute):
		if !allowMethod(w, r, http.MethodGet, http.MethodPost) {
			return nil
		}
		lr, ok := a.find(w, parts[0])
		if !ok {
			return nil
		}
		if parts[1] == supplyRoute {
			return a.serveSupply(w, r, lr)
		}
		return a.serveCodes(w, r, lr)
	case len(parts) == 2:
		action, ok := adminActions[parts[1]]
		if !ok {
			return writeError(w, http.StatusNotFound, "not_found", "no such action "+strconv.Quote(parts[1])+"; actions are pause, resume, sold-out and reopen")
		}
		if !allowMethod(w, r, http.MethodPost) {
			return nil
		}
		lr, ok := a.find(w, parts[0])
		if !ok {
			return nil
		}
		note, perr := actionReason(r)
		if perr != nil {
			return writeError(w, http.StatusBadRequest, perr.code, perr.message)
		}
		return a.apply(w, r, lr, action(), []string{parts[1]}, note)
	}
	return writeError(w, http.StatusNotFound, "not_found", "no such waiting room endpoint")
}

// allowMethod answers 405 unless the request uses one of the methods (GET
// includes HEAD).
func allowMethod(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m || m == http.MethodGet && r.Method == http.MethodHead {
			return true
		}
	}
	allow := strings.Join(methods, ", ")
	w.Header().Set("Allow", allow)
	_ = writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here; use "+allow)
	return false
}

// find looks up a live room, answering 404 when there is none.
func (a *AdminAPI) find(w http.ResponseWriter, id string) (liveRoom, bool) {
	if waitingroom.ValidRoomID(id) {
		if lr, ok := a.rooms.findRoom(id); ok {
			return lr, true
		}
	}
	_ = writeError(w, http.StatusNotFound, "unknown_room", "no live waiting room "+strconv.Quote(id)+" on this node")
	return liveRoom{}, false
}

// roomList is the answer to GET /waiting-room/.
type roomList struct {
	Rooms []roomView `json:"rooms"`
}

func (a *AdminAPI) list(w http.ResponseWriter) error {
	out := roomList{Rooms: []roomView{}}
	for _, lr := range a.rooms() {
		_, info := lr.lead()
		out.Rooms = append(out.Rooms, newRoomView(info, lr.stats()))
	}
	return writeJSON(w, http.StatusOK, out)
}

func (a *AdminAPI) show(w http.ResponseWriter, code int, lr liveRoom) error {
	_, info := lr.lead()
	return writeJSON(w, code, newRoomView(info, lr.stats()))
}

// patch applies a PATCH body. Nothing is changed unless the whole body is good
// and the settings it leads to validate.
func (a *AdminAPI) patch(w http.ResponseWriter, r *http.Request, lr liveRoom) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPatchBody+1))
	if err != nil {
		return writeError(w, http.StatusBadRequest, "invalid_body", "reading the body: "+err.Error())
	}
	if len(body) > maxPatchBody {
		return writeError(w, http.StatusBadRequest, "body_too_large", "the body is over "+strconv.Itoa(maxPatchBody>>10)+" KiB; send only the settings to change")
	}
	body, note, perr := splitReason(body)
	if perr != nil {
		return writeError(w, http.StatusBadRequest, perr.code, perr.message)
	}
	o, names, perr := decodePatch(body)
	if perr != nil {
		return writeError(w, http.StatusBadRequest, perr.code, perr.message)
	}
	return a.apply(w, r, lr, o, names, note)
}

// apply stores the overrides through the room and answers its new state.
// The change is recorded in the room's audit trail with its author and note.
func (a *AdminAPI) apply(w http.ResponseWriter, r *http.Request, lr liveRoom, o waitingroom.Overrides, names []string, note string) error {
	room, _ := lr.lead()
	_, op, err := changeAs(r, note, func(ctx context.Context) (waitingroom.Settings, error) { return room.Patch(ctx, o) })
	if err != nil {
		return a.patchFailed(w, lr.id, err)
	}
	a.logChange(lr.id, names, op)
	return a.show(w, http.StatusOK, lr)
}

// patchTimeout bounds a change's round trips to the store.
const patchTimeout = 10 * time.Second

// changeAs makes a change through do, in the name of r's operator with note
// (for the room's audit trail), and returns what do did and the operator. A
// store that hangs must not hold the admin endpoint: the change either lands
// within patchTimeout or is reported as not made.
func changeAs[T any](r *http.Request, note string, do func(context.Context) (T, error)) (T, *waitingroom.Operator, error) {
	ctx, cancel := context.WithTimeout(r.Context(), patchTimeout)
	defer cancel()
	op := operatorOf(r, note)
	v, err := do(waitingroom.WithOperator(ctx, op))
	return v, op, err
}

// patchFailed answers a change the room refused or could not store.
func (a *AdminAPI) patchFailed(w http.ResponseWriter, room string, err error) error {
	if _, ok := errors.AsType[*waitingroom.SettingError](err); ok {
		// Validate joins one error per setting at fault; keep them on one line.
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		return writeError(w, http.StatusBadRequest, "invalid_setting", msg)
	}
	if a.logger != nil {
		a.logger.Error("changing waiting room settings", zap.String("room", room), zap.Error(err))
	}
	if errors.Is(err, waitingroom.ErrStoreUnavailable) {
		w.Header().Set("Retry-After", "1")
		return writeError(w, http.StatusServiceUnavailable, "store_unavailable", "the room's store cannot be reached; nothing was changed, try again shortly")
	}
	if errors.Is(err, waitingroom.ErrVersionConflict) {
		return writeError(w, http.StatusConflict, "conflict", "the room's settings kept changing under concurrent updates; nothing was changed, try again")
	}
	return writeError(w, http.StatusInternalServerError, "internal", "the change could not be applied: "+err.Error())
}

// Interface guards.
var (
	_ caddy.AdminRouter = (*AdminAPI)(nil)
	_ caddy.Provisioner = (*AdminAPI)(nil)
)
