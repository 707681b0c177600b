package static

import "embed"

// Waiting holds the waiting page: page.html, an html/template rendered by the
// gateway for every state a visitor can be in. It inlines its own CSS and
// JavaScript so that a waiting fan's browser makes no request but status polls.
//
//go:embed waiting/page.html waiting/leave.html
var Waiting embed.FS

// WaitingPage is the path of the waiting page template inside Waiting.
const WaitingPage = "waiting/page.html"

// LeavePage is the page that confirms a fan's leaving the line, and then
// says they left: an html/template in Waiting.
const LeavePage = "waiting/leave.html"

// PoWWorker is the waiting page's proof-of-work solver, run in a Web Worker
// (which needs a script of its own, served under the room's path prefix).
//
//go:embed waiting/pow-worker.js
var PoWWorker []byte

// Fairness holds the page of a room's fairness report, an html/template
// rendered by the gateway once the sale is over.
//
//go:embed fairness/fairness.html
var Fairness embed.FS

// FairnessPage is the path of the fairness report template inside Fairness.
const FairnessPage = "fairness/fairness.html"
