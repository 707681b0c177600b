package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Scripts reply with Lua numbers (integers on the wire) and hash fields
// (strings); these read either, and the records packed into those strings
// (numbers joined by ':', lists of records joined by ',').

func toInt(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("unexpected %T in reply", v)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// ints reads a reply of n integers.
func ints(v any, n int) ([]int64, error) {
	a, ok := v.([]any)
	if !ok || len(a) != n {
		return nil, fmt.Errorf("unexpected reply %v", v)
	}
	out := make([]int64, n)
	for i, x := range a {
		var err error
		if out[i], err = toInt(x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseList reads a meta field that holds a list of records, "a:b:c,...",
// each of n fields made into a T by build (false: malformed).
func parseList[T any](s, what string, n int, build func(f []string) (T, bool)) ([]T, error) {
	if s == "" {
		return nil, nil
	}
	var out []T
	for part := range strings.SplitSeq(s, ",") {
		f := strings.Split(part, ":")
		var v T
		ok := len(f) == n
		if ok {
			v, ok = build(f)
		}
		if !ok {
			return nil, fmt.Errorf("malformed %s %q", what, part)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseUints reads fields of whole numbers, 0 or more.
func parseUints(f []string) ([]uint64, bool) {
	n := make([]uint64, len(f))
	for i := range f {
		var err error
		if n[i], err = strconv.ParseUint(f[i], 10, 64); err != nil {
			return n, false
		}
	}
	return n, true
}

// supplyFields reads want integers joined by ':' (times may be negative): a
// supply sample's, and the waitlist's records.
func supplyFields(s string, want int) ([]int64, error) {
	f := strings.Split(s, ":")
	if len(f) != want {
		return nil, fmt.Errorf("bad supply sample %q", s)
	}
	n := make([]int64, want)
	for i, x := range f {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad supply sample %q", s)
		}
		n[i] = v
	}
	return n, nil
}

// fromMicros turns a stored time back into a time.Time, in the location of the
// caller's clock. The store keeps times to the microsecond.
func fromMicros(us int64, now time.Time) time.Time {
	return time.UnixMicro(us).In(now.Location())
}
