package gateway

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"gopkg.in/yaml.v3"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The operators' files: Prometheus alert rules and a Grafana dashboard.
const (
	alertsFile    = "../deploy/alerts.yml"
	dashboardFile = "../deploy/grafana-dashboard.json"
)

// exportedMetricNames are the series names the collector exports for a
// live room: each family's name, and a histogram's _bucket, _sum and _count.
func exportedMetricNames(t *testing.T) map[string]bool {
	t.Helper()
	e := newAdminEnv(t, nil)
	r := e.node("names", waitingroom.Settings{})
	if err := r.Revoke(t.Context(), waitingroom.Pass{ID: "p", Subject: "s", ExpiresAt: e.clock.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&roomCollector{rooms: func() []liveRoom { return groupRooms([]*waitingroom.Room{r}) }})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+s] = true
			}
		}
	}
	// The one the collector leaves out while the line does not move.
	names[metricPrefix+"last_in_line_eta_seconds"] = true
	return names
}

var metricName = regexp.MustCompile(`\bfoyer_[a-z0-9_]+`)

// TestAlertsAndDashboardUseExportedMetrics: every metric the alert rules and
// the Grafana dashboard's queries name is one the gateway exports, so that
// neither watches a series that never comes.
func TestAlertsAndDashboardUseExportedMetrics(t *testing.T) {
	exported := exportedMetricNames(t)
	check := func(file, where, expr string) {
		t.Helper()
		for _, name := range metricName.FindAllString(expr, -1) {
			if !exported[name] {
				t.Errorf("%s, %s: %s is not a metric the gateway exports", file, where, name)
			}
		}
	}

	raw, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Expr == "" {
				t.Errorf("%s: alert %s has no expr", alertsFile, r.Alert)
			}
			check(alertsFile, r.Alert, r.Expr)
			n++
		}
	}
	if n == 0 {
		t.Fatalf("%s holds no rules", alertsFile)
	}

	raw, err = os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	// Every query: panels' targets' expr, and the variables' queries.
	queries := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "query" || k == "definition") {
					check(dashboardFile, path+"."+k, s)
					queries++
				}
				walk(path+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		}
	}
	walk("", dash)
	if queries < 5 {
		t.Fatalf("%s: %d queries found, want the panels' and the variables'", dashboardFile, queries)
	}
	// Whatever names the text holds (descriptions included) are exported too.
	for _, name := range metricName.FindAllString(string(raw), -1) {
		if !exported[name] {
			t.Errorf("%s names %s, which the gateway does not export", dashboardFile, name)
		}
	}
}

// TestAlertRulesPassPromtool: Prometheus's own checker accepts the rules
// (syntax, PromQL, templates), and its rule tests pass. scripts/deps.sh
// installs promtool (Debian's prometheus package).
func TestAlertRulesPassPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no promtool; scripts/deps.sh installs it (apt-get install -y prometheus)")
		}
		t.Skip("SKIPPED, integration test not run: no promtool (apt-get install -y prometheus)")
	}
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", "../deploy/alerts_test.yml"}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
