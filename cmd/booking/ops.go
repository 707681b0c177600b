package main

import "net/http"

// opsMux serves what operators and their tools read: /metrics, /readyz and
// /healthz. With -ops-addr it has a listener of its own, out of reach of a
// gateway that proxies the whole site; without, its routes share -addr.
func opsMux(metrics http.Handler, ready http.HandlerFunc) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /readyz", ready)
	mux.HandleFunc("GET /healthz", healthz)
	return mux
}

// healthz is liveness: the process answers. It looks at no dependency, so
// that an outage of one does not get every process restarted.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"ok":true}` + "\n"))
}
