package waitingroom

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// JoinLimit caps the new places one client network (ClientNetwork) may take:
// N per Per, in bursts of up to Burst (N when zero). Each node weighs it first
// on its own (clientlimit, no store call), then the store counts it for every
// node that shares it (Limits.JoinLimit). The zero JoinLimit is no limit. It
// is written "20/m", "20/m burst 40" or "100/10m"; see docs/bots.md, "Bots and
// abuse".
type JoinLimit struct {
	N     int
	Per   time.Duration
	Burst int
}

// Bounds of a join limit.
const (
	maxJoinLimitN     = 1_000_000
	maxJoinLimitBurst = 1_000_000
	minJoinLimitPer   = time.Second
	maxJoinLimitPer   = 24 * time.Hour
)

// joinLimitBounds says the bounds in words, for docs/configuration.md.
var joinLimitBounds = fmt.Sprintf("n and burst 1–%s; period `s`, `m`, `h` or a duration, 1s–24h; `off` (PATCH) removes it",
	groupThousands(maxJoinLimitN))

// ParseJoinLimit reads "<n>/<period> [burst <b>]", where period is s, m, h
// or a duration such as 10m; "" and "off" are no limit.
func ParseJoinLimit(s string) (JoinLimit, error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) == 1 && f[0] == "off" {
		return JoinLimit{}, nil
	}
	if len(f) != 1 && (len(f) != 3 || f[1] != "burst") {
		return JoinLimit{}, fmt.Errorf("%q is not <n>/<period> [burst <b>], such as 20/m or 20/m burst 40", s)
	}
	ns, per, ok := strings.Cut(f[0], "/")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || n <= 0 {
		return JoinLimit{}, fmt.Errorf("%q: the count before / must be a positive whole number, as in 20/m", f[0])
	}
	l := JoinLimit{N: n}
	switch per {
	case "s":
		l.Per = time.Second
	case "m":
		l.Per = time.Minute
	case "h":
		l.Per = time.Hour
	default:
		if l.Per, err = time.ParseDuration(per); err != nil || l.Per <= 0 {
			return JoinLimit{}, fmt.Errorf("%q: the period after / must be s, m, h or a duration such as 10m", f[0])
		}
	}
	if len(f) == 3 {
		if l.Burst, err = strconv.Atoi(f[2]); err != nil || l.Burst <= 0 {
			return JoinLimit{}, fmt.Errorf("burst %q must be a positive whole number", f[2])
		}
	}
	return l, nil
}

// String writes the limit as ParseJoinLimit reads it: "off" for none.
func (l JoinLimit) String() string {
	if l.IsZero() {
		return "off"
	}
	var per string
	switch l.Per {
	case time.Second:
		per = "s"
	case time.Minute:
		per = "m"
	case time.Hour:
		per = "h"
	default:
		per = ShortDuration(l.Per)
	}
	s := strconv.Itoa(l.N) + "/" + per
	if l.Burst > 0 {
		s += " burst " + strconv.Itoa(l.Burst)
	}
	return s
}

// IsZero reports whether there is no limit.
func (l JoinLimit) IsZero() bool { return l == JoinLimit{} }

// Rate is the limit in places per second.
func (l JoinLimit) Rate() rate.Limit { return rate.Limit(float64(l.N) / l.Per.Seconds()) }

// BurstSize is the most places an address may take at once.
func (l JoinLimit) BurstSize() int {
	if l.Burst > 0 {
		return l.Burst
	}
	return l.N
}

// Interval is how long one place takes to come back under the limit, in
// whole microseconds, which every store counts in alike.
func (l JoinLimit) Interval() time.Duration {
	if l.N <= 0 {
		return 0
	}
	return max(time.Microsecond, (l.Per / time.Duration(l.N)).Truncate(time.Microsecond))
}

// Take is the generic cell rate algorithm the stores count a network's places
// by. tat is the network's theoretical arrival time, in Unix microseconds (0
// for a network never seen), and now the time of the join. It returns the
// network's next tat when a place may be taken, or false and how long until
// one may be. A network keeps nothing but its tat, and none at all once the
// tat has passed: it then has its whole burst, as a new one would.
func (l JoinLimit) Take(tat, now int64) (next int64, wait time.Duration, ok bool) {
	t := l.Interval().Microseconds()
	tat = max(tat, now)
	if over := tat - now - int64(l.BurstSize()-1)*t; over > 0 {
		return tat, time.Duration(over) * time.Microsecond, false
	}
	return tat + t, 0, true
}

// bounds says what is wrong with a limit's bounds, if anything.
func (l JoinLimit) bounds() error {
	switch {
	case l.IsZero():
		return nil
	case l.N < 1 || l.N > maxJoinLimitN:
		return fmt.Errorf("the count must be between 1 and %s, got %d", groupThousands(maxJoinLimitN), l.N)
	case l.Per < minJoinLimitPer || l.Per > maxJoinLimitPer:
		return fmt.Errorf("the period must be between %s and %s, got %s", minJoinLimitPer, ShortDuration(maxJoinLimitPer), l.Per)
	case l.Burst < 0 || l.Burst > maxJoinLimitBurst:
		return fmt.Errorf("burst must be between 1 and %s, got %d", groupThousands(maxJoinLimitBurst), l.Burst)
	}
	return nil
}

// MarshalText writes the limit as String does.
func (l JoinLimit) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads the limit as ParseJoinLimit does.
func (l *JoinLimit) UnmarshalText(b []byte) error { return parseInto(l, b, ParseJoinLimit) }

// JoinLimitedError refuses a newcomer whose address has taken its share of
// new places: no place is made and nothing is stored.
type JoinLimitedError struct {
	// RetryAfter is when the address will have a place to take again.
	RetryAfter time.Duration
}

func (e *JoinLimitedError) Error() string {
	return fmt.Sprintf("%v; next in %v", ErrJoinLimited, e.RetryAfter)
}

// Is makes errors.Is(err, ErrJoinLimited) hold.
func (e *JoinLimitedError) Is(target error) bool { return target == ErrJoinLimited }
