package payments

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
)

// Handler serves the fake provider's pay page: GET /pay/{id} shows the amount
// with Pay and Decline buttons, POST /pay/{id} records the choice and sends
// the customer back to the payment's return URL.
func (f *Fake) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pay/{id}", f.servePayPage)
	mux.HandleFunc("POST /pay/{id}", f.servePayAction)
	return mux
}

func (f *Fake) servePayPage(w http.ResponseWriter, r *http.Request) {
	p, ok, err := f.ledger.Payment(r.Context(), r.PathValue("id"))
	if err != nil {
		// The provider's store is down, not the payment gone: try again.
		w.Header().Set("Retry-After", "2")
		http.Error(w, "the payment page is unavailable, try again shortly", http.StatusServiceUnavailable)
		return
	}
	if !ok {
		http.Error(w, "no such payment", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = payPage.Execute(w, map[string]any{
		"Payment": p,
		"Amount":  fmt.Sprintf("%d.%02d %s", p.Amount/100, p.Amount%100, p.Currency),
		"Open":    p.Status == StatusRequiresPayment,
	})
}

func (f *Fake) servePayAction(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	var err error
	switch r.PostForm.Get("action") {
	case "pay":
		err = f.Pay(id)
	case "decline":
		err = f.Decline(id)
	default:
		http.Error(w, `action must be "pay" or "decline"`, http.StatusBadRequest)
		return
	}
	if errors.Is(err, ErrUnavailable) {
		w.Header().Set("Retry-After", "2")
		http.Error(w, "the payment could not be recorded, try again shortly", http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	p, _ := f.Payment(id)
	target := "/pay/" + url.PathEscape(id)
	if p.ReturnURL != "" {
		target = p.ReturnURL
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

var payPage = template.Must(template.New("pay").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay {{.Amount}} — Fakepay</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; background: #f4f1ea; color: #1d1b16; margin: 0; display: grid; place-items: center; min-height: 100vh; }
  main { box-sizing: border-box; background: #fff; border-radius: 12px; padding: 2rem; max-width: 24rem; width: calc(100% - 2rem); box-shadow: 0 2px 12px #0002; }
  h1 { font-size: 1.25rem; margin: 0 0 .25rem; }
  .amount { font-size: 2rem; font-weight: 700; margin: .5rem 0 1.5rem; }
  .test { background: #fff3c4; border-radius: 6px; padding: .5rem .75rem; font-size: .875rem; }
  button { font: inherit; padding: .75rem 1.25rem; border-radius: 8px; border: 2px solid #1d1b16; cursor: pointer; margin: .25rem .5rem .25rem 0; }
  button[value=pay] { background: #1d1b16; color: #fff; }
  button:focus-visible { outline: 3px solid #e0a100; outline-offset: 2px; }
</style>
</head>
<body>
<main>
  <h1>Fakepay checkout</h1>
  <p class="test" role="note">Test mode: no real card is charged.</p>
  <p class="amount">{{.Amount}}</p>
  {{if .Open}}
  <form method="post">
    <button type="submit" name="action" value="pay">Pay {{.Amount}}</button>
    <button type="submit" name="action" value="decline">Decline</button>
  </form>
  {{else}}
  <p>This payment is <strong>{{.Payment.Status}}</strong>.</p>
  {{if .Payment.ReturnURL}}<p><a href="{{.Payment.ReturnURL}}">Back to the shop</a></p>{{end}}
  {{end}}
</main>
</body>
</html>
`))
