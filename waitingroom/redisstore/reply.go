package redisstore

import (
	"fmt"
	"strconv"
	"time"
)

// Scripts reply with Lua numbers (integers on the wire) and hash fields
// (strings); these read either.

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

// fromMicros turns a stored time back into a time.Time, in the location of the
// caller's clock. The store keeps times to the microsecond.
func fromMicros(us int64, now time.Time) time.Time {
	return time.UnixMicro(us).In(now.Location())
}
