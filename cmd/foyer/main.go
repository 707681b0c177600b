// Command foyer is Caddy with Foyer's waiting room built in: every standard
// Caddy module plus http.handlers.waiting_room and its Caddyfile directive.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/foyer-dev/foyer/gateway"
)

func main() {
	caddycmd.Main()
}
