package waitingroom

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Access codes (docs/codes.md): presale and member codes, each a lane's, used
// once or up to a number of times. The store keeps a code only as its keyed
// hash (CodeID), never the code, so a dump of the store reveals none; the
// room never logs one. A code is used when it makes a place: a fan who holds
// a place already keeps it, and their code is not spent.

// Bounds of codes and their batches.
const (
	// MaxCodeBatch bounds the codes one admin call adds (or generates).
	MaxCodeBatch = 10_000
	// MaxCodeUses bounds a code's uses.
	MaxCodeUses = 1_000_000
	// MinCodeLen and MaxCodeLen bound a code's length, in characters.
	MinCodeLen = 4
	MaxCodeLen = 64
	// GeneratedCodeLen is the length of a generated code: 12 characters of
	// a 32-letter alphabet are 60 bits, beyond guessing within join_limit.
	GeneratedCodeLen = 12
)

// codeAlphabet is what generated codes are made of: capitals and digits
// without the ones read for one another (0 and O, 1 and I).
const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

var (
	codePattern = regexp.MustCompile(`^[A-Z0-9_-]+$`)
)

// Errors of codes and their batches (the admin API answers each with a 4xx).
var (
	ErrCodeEmpty   = errors.New("empty code")
	ErrCodeInvalid = errors.New("invalid code")
	ErrCodeExists  = errors.New("code already stored")
	ErrUnknownLane = errors.New("unknown lane")
	ErrCodeBatch   = errors.New("bad code batch")
	// ErrCodeBatchSize refuses a batch of more than MaxCodeBatch codes.
	ErrCodeBatchSize = errors.New("code batch too large")
	// ErrCodeRefused refuses a fan's code: no such code (for any lane), or
	// its uses are spent. Which one is CodeRefusedError.Status.
	ErrCodeRefused = errors.New("code refused")
	// ErrCodeRequired refuses a newcomer with no code to a room where
	// codes_required is on: no place is made.
	ErrCodeRequired = errors.New("a code is required")
)

// NormalizeCode is the form a code is hashed in: spaces around it dropped,
// letters in capitals (fans type codes in either case). It fails for an
// empty code, one of the wrong length, or one with characters other than
// letters, digits, '-' and '_'.
func NormalizeCode(code string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	switch {
	case c == "":
		return "", ErrCodeEmpty
	case len(c) < MinCodeLen || len(c) > MaxCodeLen:
		return "", fmt.Errorf("%w: a code has %d to %d characters", ErrCodeInvalid, MinCodeLen, MaxCodeLen)
	case !codePattern.MatchString(c):
		return "", fmt.Errorf("%w: a code is letters, digits, '-' and '_'", ErrCodeInvalid)
	}
	return c, nil
}

// ValidLane reports whether name can name a lane: 1 to 32 small letters,
// digits, '-' or '_'.
func ValidLane(name string) bool { return laneNamePattern.MatchString(name) }

// GenerateCode makes a random code of GeneratedCodeLen characters.
func GenerateCode() string {
	var b [GeneratedCodeLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)] // 256 is a multiple of 32: no bias
	}
	return string(b[:])
}

// codeID is the keyed hash a store keeps a code under: HMAC-SHA256 with the
// key's code secret over the room and the normalized code, 128 bits.
func (k *SigningKey) codeID(room, code string) string {
	mac := hmac.New(sha256.New, k.codeKey)
	mac.Write([]byte(room))
	mac.Write([]byte{0})
	mac.Write([]byte(code))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// CodeEntry is one code as a store keeps it: its ID (the keyed hash), its
// lane and how many times it may be used.
type CodeEntry struct {
	ID      string `json:"id"`
	Lane    string `json:"lane"`
	MaxUses int    `json:"max_uses"`
}

// CodeUse is a stored code and how many times it was used.
type CodeUse struct {
	CodeEntry
	Used int `json:"used"`
}

// CodeAttempt is a fan's try of a code: the IDs the code has under each key
// of the room's keyring (the current key's first, so that codes added
// before a key rotation keep working), and the client network whose
// join_limit allowance the try takes ("": not counted).
type CodeAttempt struct {
	IDs    []string
	Client string
}

// CodeStatus is what a store found of a code attempt.
type CodeStatus uint8

const (
	// CodeAccepted: the code was right, one use is counted.
	CodeAccepted CodeStatus = iota
	// CodeWrong: no such code.
	CodeWrong
	// CodeUsedUp: the code's uses are spent.
	CodeUsedUp
	// CodeLimited: the client network is over join_limit; the code was
	// not looked at.
	CodeLimited
)

func (s CodeStatus) String() string {
	switch s {
	case CodeAccepted:
		return "accepted"
	case CodeWrong:
		return "wrong"
	case CodeUsedUp:
		return "used_up"
	case CodeLimited:
		return "limited"
	}
	return "unknown"
}

// CodeResult is the outcome of Store.RedeemCode: the status, the code's lane
// when accepted, and when the network may try again when limited.
type CodeResult struct {
	Status CodeStatus
	// Lane and ID, for CodeAccepted, are the code's lane and the ID it is
	// stored under (for ReturnCodeUse).
	Lane, ID   string
	RetryAfter time.Duration
}

// CodeKeeper is the part of a Store that keeps a room's access codes. The
// codes are the operator's, kept apart from the line: a loss of the store
// loses them too, and the operator adds them again from their files.
type CodeKeeper interface {
	// AddCodes stores a batch of codes, all or none: when one is stored
	// already, or repeats in the batch, it fails with ErrCodeExists and
	// stores nothing.
	AddCodes(ctx context.Context, room string, codes []CodeEntry) error
	// RedeemCode tries a code, atomically: first the attempt takes one of
	// the client network's join_limit allowance (Limits.JoinLimit, counted
	// as joins are, right code or wrong), CodeLimited when none is left;
	// then the first of the attempt's IDs stored is the code, whose use is
	// counted unless its uses are spent. Two attempts racing on the last
	// use give one CodeAccepted. It fails with ErrNoRoom when the room is
	// unknown.
	RedeemCode(ctx context.Context, room string, try CodeAttempt, now time.Time, lim Limits) (CodeResult, error)
	// ReturnCodeUse gives back one use of the code stored under id: a use
	// counted for a fan whose place was then not made (the store failed,
	// or the room settles after a loss). Uses never go below zero.
	ReturnCodeUse(ctx context.Context, room, id string) error
	// CodeUses lists the room's codes with their uses, by lane and ID.
	CodeUses(ctx context.Context, room string) ([]CodeUse, error)
}

// CodeRefusedError refuses a fan's code. It never says which lane a code
// belongs to, nor whether a wrong code exists in another room.
type CodeRefusedError struct {
	Status CodeStatus // CodeWrong or CodeUsedUp
}

func (e *CodeRefusedError) Error() string {
	return fmt.Sprintf("%v: %s", ErrCodeRefused, e.Status)
}

// Is makes errors.Is(err, ErrCodeRefused) hold.
func (e *CodeRefusedError) Is(target error) bool { return target == ErrCodeRefused }

// SortCodeUses orders codes as CodeUses lists them: by lane, then ID.
func SortCodeUses(uses []CodeUse) {
	sort.Slice(uses, func(i, j int) bool {
		if uses[i].Lane != uses[j].Lane {
			return uses[i].Lane < uses[j].Lane
		}
		return uses[i].ID < uses[j].ID
	})
}
