package waitingroom

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Batches of access codes, as the operator adds them (docs/codes.md): checked
// whole before any is stored, hashed with the room's current key, stored all
// or none, and recorded in the audit trail by lane and count, never a code.

// NewCode is one code of a batch as the operator wrote it.
type NewCode struct {
	Code    string
	Lane    string
	MaxUses int
}

// CodeBatchError says what is wrong with a batch: the line (from 1, as in
// the operator's CSV; 0 for the batch as a whole) and the problem. It wraps
// ErrCodeBatch, and ErrUnknownLane or ErrCodeEmpty where one of those is it.
type CodeBatchError struct {
	Line int
	Err  error
}

func (e *CodeBatchError) Error() string {
	if e.Line == 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e *CodeBatchError) Unwrap() []error { return []error{ErrCodeBatch, e.Err} }

// CheckCodeBatch checks a batch against the lanes codes may be added for,
// and returns the codes normalized. Line numbers start at first.
func CheckCodeBatch(batch []NewCode, lanes []string, first int) ([]NewCode, error) {
	if len(batch) == 0 {
		return nil, &CodeBatchError{Err: fmt.Errorf("%w: no codes", ErrCodeBatch)}
	}
	if len(batch) > MaxCodeBatch {
		return nil, &CodeBatchError{Err: fmt.Errorf("%w: %d codes, at most %d a batch", ErrCodeBatchSize, len(batch), MaxCodeBatch)}
	}
	out := make([]NewCode, len(batch))
	seen := make(map[string]int, len(batch))
	for i, c := range batch {
		line := first + i
		code, err := NormalizeCode(c.Code)
		if err != nil {
			return nil, &CodeBatchError{Line: line, Err: err}
		}
		if !slices.Contains(lanes, c.Lane) {
			return nil, &CodeBatchError{Line: line, Err: fmt.Errorf("%w %q: the room's lanes are %s", ErrUnknownLane, c.Lane, lanesWord(lanes))}
		}
		if c.MaxUses < 1 || c.MaxUses > MaxCodeUses {
			return nil, &CodeBatchError{Line: line, Err: fmt.Errorf("max_uses must be between 1 and %d, got %d", MaxCodeUses, c.MaxUses)}
		}
		if at, ok := seen[code]; ok {
			return nil, &CodeBatchError{Line: line, Err: fmt.Errorf("%w: the same code as line %d", ErrCodeExists, at)}
		}
		seen[code] = line
		out[i] = NewCode{Code: code, Lane: c.Lane, MaxUses: c.MaxUses}
	}
	return out, nil
}

func lanesWord(lanes []string) string {
	if len(lanes) == 0 {
		return "none"
	}
	return strings.Join(lanes, ", ")
}

// AddCodes checks a batch (CheckCodeBatch, against the room's lanes, its lines
// numbered from firstLine), stores it hashed, all or none, and records it in
// the audit trail: one entry per batch, saying how many codes it added for
// each lane. It returns the codes added, in the batch's order, each with
// the entry stored for it.
func (r *Room) AddCodes(ctx context.Context, batch []NewCode, firstLine int) ([]AddedCode, error) {
	// Without lanes a code's place is in the one line, the general lane.
	lanes := []string{GeneralLane}
	if l := r.settings().RoomLanes(); l.On() {
		lanes = lanes[:0]
		for _, x := range l.List() {
			lanes = append(lanes, x.Name)
		}
	}
	codes, err := CheckCodeBatch(batch, lanes, firstLine)
	if err != nil {
		return nil, err
	}
	added := make([]AddedCode, len(codes))
	entries := make([]CodeEntry, len(codes))
	perLane := map[string]int{}
	for i, c := range codes {
		entries[i] = CodeEntry{ID: r.key.codeID(r.id, c.Code), Lane: c.Lane, MaxUses: c.MaxUses}
		added[i] = AddedCode{Code: c.Code, CodeEntry: entries[i]}
		perLane[c.Lane]++
	}
	if err := r.store.AddCodes(ctx, r.id, entries); err != nil {
		return nil, err
	}
	op, _ := ctx.Value(operatorKey{}).(*Operator)
	if op == nil {
		op = &Operator{Who: "unattributed"}
	}
	e, err := r.RecordAudit(ctx, AuditEntry{Who: op.Who, Action: AuditCodes, Summary: codeBatchSummary(perLane), Note: op.Note})
	op.Entry, op.AuditErr = &e, err
	return added, nil
}

// AddedCode is a code of a batch, normalized, with the entry stored for it:
// what the operator is given back, once.
type AddedCode struct {
	Code string
	CodeEntry
}

// codeBatchSummary words a batch for the audit trail: "batch of 25 codes for
// lane presale", lanes in order.
func codeBatchSummary(perLane map[string]int) string {
	lanes := make([]string, 0, len(perLane))
	for l := range perLane {
		lanes = append(lanes, l)
	}
	sort.Strings(lanes)
	parts := make([]string, len(lanes))
	for i, l := range lanes {
		word := "codes"
		if perLane[l] == 1 {
			word = "code"
		}
		parts[i] = fmt.Sprintf("batch of %d %s for lane %s", perLane[l], word, l)
	}
	return strings.Join(parts, "; ")
}

// CodeUses lists the room's codes and how many times each was used.
func (r *Room) CodeUses(ctx context.Context) ([]CodeUse, error) {
	return r.store.CodeUses(ctx, r.id)
}

// CodeID is the ID the store keeps code under (its keyed hash with the
// room's current key), or an error for a code that is not one.
func (r *Room) CodeID(code string) (string, error) {
	c, err := NormalizeCode(code)
	if err != nil {
		return "", err
	}
	return r.key.codeID(r.id, c), nil
}
