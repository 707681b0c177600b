package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// devPassCookie carries a self-issued pass in the standalone demo.
const devPassCookie = "foyer_dev_pass"

// devPassHandler stands in for the gateway when there is none: POST gives the
// browser a pass for a fresh customer, in an HttpOnly cookie. It exists only
// with -dev-passes.
func devPassHandler(key *pass.Signer, room, issuer string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, `{"error":"method_not_allowed","message":"POST to get a pass"}`, http.StatusMethodNotAllowed)
			return
		}
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		customer := "dev-" + hex.EncodeToString(b)
		now := time.Now()
		tok, err := key.Sign(pass.Claims{Room: room, Subject: customer, IssuedAt: now, ExpiresAt: now.Add(time.Hour)}, issuer)
		if err != nil {
			http.Error(w, `{"error":"internal_error","message":"could not issue a pass"}`, http.StatusInternalServerError)
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: devPassCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
			Secure: r.TLS != nil, Expires: now.Add(time.Hour),
		})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"customer": customer})
	})
}
