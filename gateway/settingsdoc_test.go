package gateway

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite docs/configuration.md's generated settings table and runtime list")

// docs/configuration.md's generated parts sit between these markers.
const (
	settingsBegin = "<!-- settings:begin -->"
	settingsEnd   = "<!-- settings:end -->"
	runtimeBegin  = "<!-- runtime-settings:begin -->"
	runtimeEnd    = "<!-- runtime-settings:end -->"
)

// TestREADMESettings fails when docs/configuration.md's settings table or its list of
// runtime settings differs from what the settings tables say; with
// -update-readme (which `go generate ./gateway/` passes) it rewrites them.
func TestREADMESettings(t *testing.T) {
	const path = "../docs/configuration.md"
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(old)
	for _, part := range []struct{ begin, end, text string }{
		{settingsBegin, settingsEnd, settingsTableMarkdown()},
		{runtimeBegin, runtimeEnd, runtimeSettingsMarkdown()},
	} {
		if doc, err = replaceBetween(doc, part.begin, part.end, part.text); err != nil {
			t.Fatal(err)
		}
	}
	if doc == string(old) {
		return
	}
	if *updateREADME {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log(path + ": settings rewritten")
		return
	}
	t.Errorf("%s's settings are stale: run `go generate ./gateway/` "+
		"(or `go test ./gateway/ -run '^TestREADMESettings$' -update-readme`) and commit it", path)
}

func replaceBetween(doc, begin, end, text string) (string, error) {
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return doc, fmt.Errorf("docs/configuration.md has no %s ... %s markers", begin, end)
	}
	return doc[:i+len(begin)] + "\n" + text + doc[j:], nil
}

// settingsTableMarkdown is the table of Caddyfile settings, one row each, in
// caddyfileSettings' order.
func settingsTableMarkdown() string {
	var b bytes.Buffer
	b.WriteString("| setting | meaning | default | limits | runtime |\n|---|---|---|---|---|\n")
	for _, s := range caddyfileSettings {
		runtime := "no"
		if s.runtime() {
			runtime = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", strings.ReplaceAll(s.syntax, "|", `\|`),
			s.doc, s.defaultDoc, s.limits, runtime)
	}
	return b.String()
}

// runtimeSettingsMarkdown is the sentence listing the settings a PATCH takes,
// with the notation of those that are not plain numbers, text or flags.
func runtimeSettingsMarkdown() string {
	var runtime []*waitingroom.Setting
	for _, d := range waitingroom.SettingDefs() {
		if d.Runtime {
			runtime = append(runtime, d)
		}
	}
	note := func(d *waitingroom.Setting) string { return d.Notation().Patch }
	var items []string
	for i, d := range runtime {
		item := "`" + d.Name + "`"
		// A note is given once, after the last of a run of settings sharing it.
		if n := note(d); n != "" && (i+1 == len(runtime) || note(runtime[i+1]) != n) {
			item += " " + n
		}
		items = append(items, item)
	}
	return "Runtime settings (`PATCH`): " + strings.Join(items, ", ") + ".\n"
}
