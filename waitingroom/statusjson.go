package waitingroom

import (
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"
)

// AppendJSON appends the status as JSON, byte for byte what encoding/json
// writes for it, without reflection. Status polls are the most frequent request
// a room answers; this keeps them close to the cost of a static response.
func (st Status) AppendJSON(b []byte) []byte {
	b = append(b, `{"room":`...)
	b = appendJSONString(b, st.Room)
	if st.Title != "" {
		b = append(b, `,"title":`...)
		b = appendJSONString(b, st.Title)
	}
	b = append(b, `,"state":`...)
	b = appendJSONString(b, string(st.State))
	b = append(b, `,"position":`...)
	if st.Position == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendUint(b, *st.Position, 10)
	}
	b = append(b, `,"eta_seconds":`...)
	if st.ETASeconds == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *st.ETASeconds, 10)
	}
	b = append(b, `,"refresh_seconds":`...)
	b = strconv.AppendInt(b, int64(st.RefreshSeconds), 10)
	b = append(b, `,"progress":`...)
	b = appendJSONFloat(b, st.Progress)
	b = append(b, `,"waiting":`...)
	b = strconv.AppendUint(b, st.Waiting, 10)
	if st.OpensAt != nil {
		b = append(b, `,"opens_at":`...)
		b = appendJSONTime(b, *st.OpensAt)
	}
	if st.DrawIndex != nil {
		b = append(b, `,"draw_index":`...)
		b = strconv.AppendUint(b, *st.DrawIndex, 10)
	}
	if st.AwaitingDraw {
		b = append(b, `,"awaiting_draw":true`...)
	}
	if st.SessionEnds != nil {
		b = append(b, `,"session_ends":`...)
		b = appendJSONTime(b, *st.SessionEnds)
	}
	if st.Reconnecting {
		b = append(b, `,"reconnecting":true`...)
	}
	if st.Returned {
		b = append(b, `,"returned":true`...)
	}
	if st.TurnPassed {
		b = append(b, `,"turn_passed":true`...)
	}
	if st.Requeued {
		b = append(b, `,"requeued":true`...)
	}
	if st.QueueAll {
		b = append(b, `,"queue_all":true`...)
	}
	if c := st.Challenge; c != nil {
		b = append(b, `,"challenge":{"algorithm":`...)
		b = appendJSONString(b, c.Algorithm)
		b = append(b, `,"seed":`...)
		b = appendJSONString(b, c.Seed)
		b = append(b, `,"bits":`...)
		b = strconv.AppendInt(b, int64(c.Bits), 10)
		b = append(b, '}')
	}
	if st.Outcome != "" {
		b = append(b, `,"outcome":`...)
		b = appendJSONString(b, string(st.Outcome))
	}
	if c := st.Chance; c != nil {
		b = append(b, `,"chance":{"low":`...)
		b = appendJSONFloat(b, c.Low)
		b = append(b, `,"high":`...)
		b = appendJSONFloat(b, c.High)
		b = append(b, '}')
	}
	if e := st.SupplyEnds; e != nil {
		b = append(b, `,"supply_ends":{"low":`...)
		b = strconv.AppendUint(b, e.Low, 10)
		b = append(b, `,"high":`...)
		b = strconv.AppendUint(b, e.High, 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// lastString caches the encoding of the last string that needed encoding/json
// (a title), which is nearly always the one asked for next.
var lastString atomic.Pointer[[2]string]

func appendJSONString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	if last := lastString.Load(); last != nil && last[0] == s {
		return append(b, last[1]...)
	}
	enc, _ := json.Marshal(s) // a string always marshals
	lastString.Store(&[2]string{s, string(enc)})
	return append(b, enc...)
}

// appendJSONFloat writes f as encoding/json does for values it can meet here
// (progress, rounded to four places, so never in exponent form).
func appendJSONFloat(b []byte, f float64) []byte {
	if f != 0 && (f < 1e-6 || f >= 1e21) {
		enc, _ := json.Marshal(f)
		return append(b, enc...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
