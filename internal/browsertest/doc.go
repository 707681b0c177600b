// Package browsertest drives a real headless Chromium for the browser tests:
// one isolated browser per fan, tabs with JavaScript on or off at a desktop's
// or a phone's width, everything a page writes to its console, screenshots
// kept as artifacts of the run (never committed), and axe-core's WCAG rules
// run inside the page. Only tests import it.
package browsertest
