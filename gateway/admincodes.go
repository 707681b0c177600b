package gateway

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Access codes on the admin API (docs/codes.md):
//
//	POST /waiting-room/<room>/codes   add a batch: a CSV body (text/csv) of
//	                                  code,lane,max_uses lines, or JSON
//	                                  {"generate": n, "lane": "...", "max_uses": m}
//	                                  for n random codes; answers the batch as
//	                                  CSV, code,lane,max_uses,id, the only time
//	                                  generated codes are shown
//	GET  /waiting-room/<room>/codes   every code's id, lane, max_uses and uses,
//	                                  as CSV (?used=true: only codes used)
//
// The store keeps codes only as their ids (keyed hashes); the audit trail
// records "batch of n codes for lane x", and no log line names a code.

// maxCodeBody bounds a batch's body: MaxCodeBatch lines of the longest code
// and lane fit with room to spare.
const maxCodeBody = 2 << 20

// codeCSVHeader is the optional first line of a batch, and of the answer.
var codeCSVHeader = []string{"code", "lane", "max_uses"}

// codeGenerate is the JSON body that asks for random codes.
type codeGenerate struct {
	Generate int    `json:"generate"`
	Lane     string `json:"lane"`
	MaxUses  int    `json:"max_uses"`
	Reason   string `json:"reason"`
}

func (a *AdminAPI) serveCodes(w http.ResponseWriter, r *http.Request, lr liveRoom) error {
	room, _ := lr.lead()
	if r.Method != http.MethodPost {
		return listCodes(w, r, room)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCodeBody+1))
	if err != nil {
		return writeError(w, http.StatusBadRequest, "invalid_body", "reading the body: "+err.Error())
	}
	if len(body) > maxCodeBody {
		return writeError(w, http.StatusRequestEntityTooLarge, "body_too_large",
			fmt.Sprintf("the body is over %d MiB; send at most %d codes a batch", maxCodeBody>>20, waitingroom.MaxCodeBatch))
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var batch []waitingroom.NewCode
	first, note := 1, ""
	switch mt {
	case "text/csv":
		batch, first, err = parseCodeCSV(body)
		if err != nil {
			return writeError(w, http.StatusBadRequest, "invalid_csv", err.Error())
		}
		note = r.URL.Query().Get(reasonField)
	case "application/json":
		var g codeGenerate
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&g); err != nil {
			return writeError(w, http.StatusBadRequest, "invalid_body", "the body must be {\"generate\": n, \"lane\": \"...\", \"max_uses\": m}: "+err.Error())
		}
		if g.Generate < 1 || g.Generate > waitingroom.MaxCodeBatch {
			return writeError(w, http.StatusBadRequest, "batch_too_large",
				fmt.Sprintf("generate: between 1 and %d codes a batch, got %d", waitingroom.MaxCodeBatch, g.Generate))
		}
		uses := g.MaxUses
		if uses == 0 {
			uses = 1 // single use unless said
		}
		batch = make([]waitingroom.NewCode, g.Generate)
		for i := range batch {
			batch[i] = waitingroom.NewCode{Code: waitingroom.GenerateCode(), Lane: g.Lane, MaxUses: uses}
		}
		note = g.Reason
	default:
		return writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send a CSV batch as text/csv, or {\"generate\": n, ...} as application/json")
	}
	if raw, _ := json.Marshal(note); note != "" {
		if _, perr := checkReason(raw); perr != nil {
			return writeError(w, http.StatusBadRequest, perr.code, perr.message)
		}
	}
	added, op, err := changeAs(r, note, func(ctx context.Context) ([]waitingroom.AddedCode, error) { return room.AddCodes(ctx, batch, first) })
	if err != nil {
		return a.codesFailed(w, lr.id, err)
	}
	if a.logger != nil {
		// How many and by whom, never a code.
		a.logger.Info("waiting room codes added", zap.String("room", lr.id), zap.Int("codes", len(added)), zap.String("who", op.Who))
	}
	var out bytes.Buffer
	cw := csv.NewWriter(&out)
	_ = cw.Write(append(codeCSVHeader, "id"))
	for _, c := range added {
		_ = cw.Write([]string{c.Code, c.Lane, strconv.Itoa(c.MaxUses), c.ID})
	}
	cw.Flush()
	return writeCSV(w, http.StatusCreated, out.Bytes())
}

// parseCodeCSV reads a batch: code,lane,max_uses lines (max_uses may be left
// out for a single-use code), after an optional header line. It returns the
// number of the batch's first line.
func parseCodeCSV(body []byte) ([]waitingroom.NewCode, int, error) {
	cr := csv.NewReader(bytes.NewReader(body))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	var batch []waitingroom.NewCode
	first := 1
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("not CSV: %v", err)
		}
		if line == 1 && strings.EqualFold(strings.TrimSpace(rec[0]), "code") {
			first = 2
			continue
		}
		if len(rec) < 2 || len(rec) > 3 {
			return nil, 0, fmt.Errorf("line %d: want code,lane,max_uses; got %d fields", line, len(rec))
		}
		c := waitingroom.NewCode{Code: rec[0], Lane: strings.TrimSpace(rec[1]), MaxUses: 1}
		if len(rec) == 3 && strings.TrimSpace(rec[2]) != "" {
			if c.MaxUses, err = strconv.Atoi(strings.TrimSpace(rec[2])); err != nil {
				return nil, 0, fmt.Errorf("line %d: max_uses %q is not a whole number", line, rec[2])
			}
		}
		batch = append(batch, c)
		if len(batch) > waitingroom.MaxCodeBatch {
			break // CheckCodeBatch says so
		}
	}
	return batch, first, nil
}

// codesFailed answers a batch the room refused or could not store.
func (a *AdminAPI) codesFailed(w http.ResponseWriter, room string, err error) error {
	for _, e := range []struct {
		err        error
		code       int
		name, hint string
	}{
		{waitingroom.ErrCodeBatchSize, http.StatusBadRequest, "batch_too_large", ""},
		{waitingroom.ErrUnknownLane, http.StatusBadRequest, "unknown_lane", "; add the lane to the room's lanes first"},
		{waitingroom.ErrCodeEmpty, http.StatusBadRequest, "code_empty", ""},
		{waitingroom.ErrCodeInvalid, http.StatusBadRequest, "code_invalid", ""},
		{waitingroom.ErrCodeExists, http.StatusConflict, "code_exists", "; nothing was added"},
		{waitingroom.ErrCodeBatch, http.StatusBadRequest, "invalid_batch", ""},
	} {
		if errors.Is(err, e.err) {
			return writeError(w, e.code, e.name, err.Error()+e.hint)
		}
	}
	return a.patchFailed(w, room, err)
}

// listCodes answers the room's codes and their uses as CSV.
func listCodes(w http.ResponseWriter, r *http.Request, room *waitingroom.Room) error {
	onlyUsed := false
	if v := r.URL.Query().Get("used"); v != "" {
		var err error
		if onlyUsed, err = strconv.ParseBool(v); err != nil {
			return writeError(w, http.StatusBadRequest, "invalid_query", "used: true or false, got "+strconv.Quote(v))
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), patchTimeout)
	defer cancel()
	uses, err := room.CodeUses(ctx)
	if err != nil {
		w.Header().Set("Retry-After", "1")
		return writeError(w, http.StatusServiceUnavailable, "store_unavailable", "the room's store cannot be reached; try again shortly")
	}
	var out bytes.Buffer
	cw := csv.NewWriter(&out)
	_ = cw.Write([]string{"id", "lane", "max_uses", "used"})
	for _, u := range uses {
		if onlyUsed && u.Used == 0 {
			continue
		}
		_ = cw.Write([]string{u.ID, u.Lane, strconv.Itoa(u.MaxUses), strconv.Itoa(u.Used)})
	}
	cw.Flush()
	return writeCSV(w, http.StatusOK, out.Bytes())
}

// writeCSV answers a CSV body, never cached: it may hold codes.
func writeCSV(w http.ResponseWriter, code int, body []byte) error {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/csv; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, err := w.Write(body)
	return err
}
