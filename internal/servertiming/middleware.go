package servertiming

import (
	"net/http"
	"time"
)

// HeaderName is the response header the figures travel in.
const HeaderName = "Server-Timing"

// Middleware gives every request a Timing and writes its figures into the
// response's header just before the header is sent.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, t := Start(r.Context())
		tw := &timingWriter{ResponseWriter: w, t: t}
		next.ServeHTTP(tw, r.WithContext(ctx))
	})
}

type timingWriter struct {
	http.ResponseWriter
	t      *Timing
	headed bool
}

func (w *timingWriter) WriteHeader(code int) {
	if !w.headed && code >= 200 {
		w.headed = true
		w.Header().Set(HeaderName, w.t.Figures(time.Now()).Header())
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *timingWriter) Write(b []byte) (int, error) {
	if !w.headed {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *timingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
