package static

import _ "embed"

// The operators' dashboard (the gateway's waiting_room_dashboard handler):
// page.html is an html/template; the gateway inlines the script and the
// style into it, so the page is one response that loads nothing else and
// works with no network beyond the node it is served from.
var (
	//go:embed dashboard/page.html
	DashboardPage string
	//go:embed dashboard/dashboard.js
	DashboardScript string
	//go:embed dashboard/dashboard.css
	DashboardStyle string
)

// The dashboard's index of a room's previews (the gateway's preview.go):
// an html/template with its style inline and no script, which takes its
// head from page.html's "head".
//
//go:embed dashboard/previews.html
var DashboardPreviews string
