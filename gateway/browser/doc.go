// Package browser holds Foyer's tests in which a real browser (headless
// Chromium, through chromedp and internal/browsertest) walks a fan's pages:
// every state of the waiting page at a desktop's and a phone's width, with
// JavaScript on and off, in several languages, through axe-core's WCAG
// rules; the fan's turn, leaving the line, the proof of work, the embedded
// room, the previews and the operator's dashboard. It has no code of its own
// beyond this file: the tests and their harnesses (harness_*_test.go) use only
// gateway's exported API (gateway.NewStandalone, each test on a clock of its
// own, or an in-process Caddy), so that they run in parallel, as many
// browsers at once as the harness allows. Without Chromium or axe-core the
// tests skip, and fail under CI=true (scripts/deps.sh installs both).
package browser
