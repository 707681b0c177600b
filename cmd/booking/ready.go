package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// readyTimeout bounds each dependency's ping: a probe must answer well
// within a load balancer's own timeout, whatever the database does.
const readyTimeout = time.Second

// dependency is something the service needs to serve customers.
type dependency struct {
	name string
	ping func(context.Context) error
}

// readyHandler answers /readyz: 200 when every dependency answers within
// readyTimeout, else 503 naming the ones that did not. /healthz stays a
// liveness check that looks at nothing but the process, so that a database
// outage takes every process out of rotation (readiness) without getting
// them all restarted (liveness).
func readyHandler(deps []dependency) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		var mu sync.Mutex
		var down []string
		var wg sync.WaitGroup
		for _, d := range deps {
			wg.Go(func() {
				if err := d.ping(ctx); err != nil {
					mu.Lock()
					down = append(down, d.name)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		sort.Strings(down)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if len(down) > 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]any{
				"error": "not_ready", "message": "not ready: " + strings.Join(down, ", ") + " not answering", "down": down,
			})
			return
		}
		names := make([]string, 0, len(deps))
		for _, d := range deps {
			names = append(names, d.name)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ready": true, "checked": names})
	}
}
