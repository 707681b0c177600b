// Package foyer is the plugin package of Foyer's Caddy modules: importing it
// registers the waiting_room handler and directive, the waiting_room_dashboard
// handler and directive, the caddy.listeners.foyer_conn_limit listener
// wrapper, the waiting room's admin API and the `foyer
// waiting-room` commands, as any Caddy plugin does. It is
// what `xcaddy build --with github.com/foyer-dev/foyer` imports (see the
// README, "Building Caddy with Foyer and other plugins"); the code lives in
// package gateway and the queue in package waitingroom.
package foyer

import (
	// The modules register themselves in their init functions.
	_ "github.com/foyer-dev/foyer/gateway"
)
