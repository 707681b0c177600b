// Package gateway is Foyer's Caddy adapter: the http.handlers.waiting_room
// middleware and its Caddyfile directive, the room endpoints under the path
// prefix (status, jwks.json, draw), and the rendering of the waiting page; and
// http.handlers.waiting_room_dashboard, the operators' live page of every room
// of the node, which reads only what the node already keeps.
//
// The queue itself lives in package waitingroom; this package only translates
// between HTTP and it. It must never let a request without a valid pass reach
// the origin (unless the operator chose passthrough or on_store_failure open),
// never trust a client-sent X-Waiting-Room-* header, and never answer bad input
// with a 5xx.
package gateway
