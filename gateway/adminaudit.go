package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The audit trail on the admin API (see the README, "The audit trail"): every
// change is recorded with who made it and why, and
//
//	GET  /waiting-room/<room>/audit?after=<seq>&limit=<n>   the trail, a page
//	POST /waiting-room/<room>/key-rotation                  record a key rotation
//
// A change's author is the request's remote address, and the node of the
// command line when it says so (operatorHeader).

// operatorHeader is how the command line names the machine it runs on.
const operatorHeader = "Foyer-Operator"

// reasonField is the optional member of a change's body that says why.
const reasonField = "reason"

// auditPage is the default and the most entries a GET of the trail returns.
const (
	auditPage    = 100
	maxAuditPage = waitingroom.MaxAudit
)

// operatorOf names the author of an admin request.
func operatorOf(r *http.Request, note string) *waitingroom.Operator {
	who := r.RemoteAddr
	if who == "" || r.RemoteAddr == "@" {
		who = "unix socket"
	}
	if via := cleanLine(r.Header.Get(operatorHeader), 100); via != "" {
		who = via + " via " + who
	}
	return &waitingroom.Operator{Who: who, Note: note}
}

// cleanLine keeps a header's text printable and bounded, for a log line.
func cleanLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	if len(s) > max {
		s = s[:max]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return strings.TrimSpace(s)
}

// checkReason validates an operator's reason: one line, bounded.
func checkReason(raw json.RawMessage) (string, *patchError) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", badBody("invalid_reason", "reason: must be a string")
	}
	switch {
	case utf8.RuneCountInString(s) > waitingroom.MaxAuditNote:
		return "", badBody("invalid_reason", "reason: at most %d characters, got %d", waitingroom.MaxAuditNote, utf8.RuneCountInString(s))
	case strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }):
		return "", badBody("invalid_reason", "reason: must be one line of printable text")
	}
	return strings.TrimSpace(s), nil
}

// splitReason takes the reason out of a PATCH body, returning the body
// without it. A body that is not a JSON object is returned as it came, for
// decodePatch to refuse.
func splitReason(body []byte) ([]byte, string, *patchError) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return body, "", nil
	}
	raw, ok := fields[reasonField]
	if !ok {
		return body, "", nil
	}
	note, perr := checkReason(raw)
	if perr != nil {
		return nil, "", perr
	}
	delete(fields, reasonField)
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, "", badBody("invalid_body", "%v", err)
	}
	return rest, note, nil
}

// actionReason reads the optional body of a POST action: nothing, or
// {"reason": "..."}.
func actionReason(r *http.Request) (string, *patchError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPatchBody+1))
	if err != nil || len(body) > maxPatchBody {
		return "", badBody("invalid_body", "the body must be empty or {\"reason\": \"...\"}")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return "", nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return "", malformed(err)
	}
	for k := range fields {
		if k != reasonField {
			return "", badBody("invalid_body", "%q: an action's body takes only a reason; change settings with PATCH", k)
		}
	}
	if raw, ok := fields[reasonField]; ok {
		return checkReason(raw)
	}
	return "", nil
}

// logChange writes an admin change to the log at info, values included (a
// trail holds no secret), or says why it is missing from the trail.
func (a *AdminAPI) logChange(room string, names []string, op *waitingroom.Operator) {
	if a.logger == nil {
		return
	}
	fields := []zap.Field{zap.String("room", room), zap.Strings("settings", names), zap.String("who", op.Who)}
	if e := op.Entry; e != nil {
		changes := make([]string, len(e.Changes))
		for i, c := range e.Changes {
			changes[i] = c.Setting + ": " + string(c.Old) + " -> " + string(c.New)
		}
		fields = append(fields, zap.String("action", string(e.Action)), zap.Strings("changes", changes), zap.Uint64("seq", e.Seq))
	}
	if op.Note != "" {
		fields = append(fields, zap.String("reason", op.Note))
	}
	a.logger.Info("waiting room settings changed", fields...)
	if op.AuditErr != nil {
		a.logger.Warn("waiting room change not kept in its audit trail", zap.String("room", room), zap.Error(op.AuditErr))
	}
}

// auditAnswer is the answer to GET /waiting-room/<room>/audit. Next is the
// cursor of the following page, when this one is full.
type auditAnswer struct {
	Room    string                   `json:"room"`
	Entries []waitingroom.AuditEntry `json:"entries"`
	Next    *uint64                  `json:"next,omitempty"`
}

// showAudit answers a page of the room's trail.
func (a *AdminAPI) showAudit(w http.ResponseWriter, r *http.Request, lr liveRoom) error {
	q := r.URL.Query()
	var after uint64
	if s := q.Get("after"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return writeError(w, http.StatusBadRequest, "invalid_cursor", "after: must be the seq of an entry (a whole number), got "+strconv.Quote(s))
		}
		after = n
	}
	limit := auditPage
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxAuditPage {
			return writeError(w, http.StatusBadRequest, "invalid_limit", "limit: must be a whole number from 1 to "+strconv.Itoa(maxAuditPage)+", got "+strconv.Quote(s))
		}
		limit = n
	}
	room, _ := lr.lead()
	ctx, cancel := context.WithTimeout(r.Context(), patchTimeout)
	defer cancel()
	entries, err := room.AuditTrail(ctx, after, limit)
	if err != nil {
		return a.patchFailed(w, lr.id, err)
	}
	out := auditAnswer{Room: lr.id, Entries: append([]waitingroom.AuditEntry{}, entries...)}
	if len(entries) == limit {
		next := entries[len(entries)-1].Seq
		out.Next = &next
	}
	return writeJSON(w, http.StatusOK, out)
}

// keyRotation is the body of POST /waiting-room/<room>/key-rotation, which
// the rotate-key command sends once the node reloaded with the new keys.
type keyRotation struct {
	Step     string `json:"step"` // stage or promote
	OldKeyID string `json:"old_key_id,omitempty"`
	NewKeyID string `json:"new_key_id"`
	Reason   string `json:"reason,omitempty"`
	addr     string // the admin endpoint of the node the command reloaded
}

// recordKeyRotation adds a key rotation to the room's trail. The node checks
// that the room verifies with the new key, so the trail tells only of keys
// the room took up; only key ids are recorded, never keys.
func (a *AdminAPI) recordKeyRotation(w http.ResponseWriter, r *http.Request, lr liveRoom) error {
	var kr keyRotation
	dec := json.NewDecoder(io.LimitReader(r.Body, 4<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kr); err != nil {
		return writeError(w, http.StatusBadRequest, "invalid_body", `the body must be {"step": "stage"|"promote", "old_key_id": "...", "new_key_id": "..."}: `+err.Error())
	}
	if kr.Step != "stage" && kr.Step != "promote" {
		return writeError(w, http.StatusBadRequest, "invalid_body", "step: must be stage or promote, got "+strconv.Quote(kr.Step))
	}
	note, perr := checkReason(json.RawMessage(strconv.Quote(kr.Reason)))
	if perr != nil {
		return writeError(w, http.StatusBadRequest, perr.code, perr.message)
	}
	room, _ := lr.lead()
	kids := room.KeyIDs()
	if !slices.Contains(kids, kr.NewKeyID) || kr.Step == "promote" && kids[0] != kr.NewKeyID {
		return writeError(w, http.StatusConflict, "not_this_key", "the room does not "+map[string]string{"stage": "verify", "promote": "sign"}[kr.Step]+
			" with key "+strconv.Quote(kr.NewKeyID)+": reload this node first, or the room has its own signing_key")
	}
	setting := map[string]string{"stage": "staged_key_id", "promote": "signing_key_id"}[kr.Step]
	old := json.RawMessage("null")
	if kr.OldKeyID != "" {
		old = json.RawMessage(strconv.Quote(kr.OldKeyID))
	}
	op := operatorOf(r, note)
	ctx, cancel := context.WithTimeout(r.Context(), patchTimeout)
	defer cancel()
	e, err := room.RecordAudit(ctx, waitingroom.AuditEntry{
		Who: op.Who, Action: waitingroom.AuditKeyRotation, Note: note,
		Changes: []waitingroom.AuditChange{{Setting: setting, Old: old, New: json.RawMessage(strconv.Quote(kr.NewKeyID))}},
	})
	if err != nil {
		return a.patchFailed(w, lr.id, err)
	}
	op.Entry = &e
	a.logChange(lr.id, []string{setting}, op)
	return writeJSON(w, http.StatusOK, e)
}
