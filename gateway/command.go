package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/foyer-dev/foyer/waitingroom"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "waiting-room",
		Usage: "status [<room>] | pause|resume|sold-out|reopen <room> [--reason <text>] | audit <room> | supply <room> [<units>] | set <room> <setting>=<value>... | codes add|generate|usage <room> ... | rotate-key stage|promote [--address <interface>]",
		Short: "Shows and changes the waiting rooms of a running Foyer",
		Long: `
Shows and changes the waiting rooms of a running Foyer through its admin API
(the admin.api.waiting_room module). A change is kept in the room's store, so
every node sharing that store follows it within a second.

  waiting-room status [<room>]      a summary of one room, or of every live room
  waiting-room pause <room>         stop admitting; waiting fans keep their place
  waiting-room resume <room>        admit again
  waiting-room sold-out <room>      show everyone the sold-out page
  waiting-room reopen <room>        undo sold-out
  waiting-room audit <room>         the room's audit trail: every change, when,
                                    by whom, old and new values
  waiting-room codes add|generate|usage <room> ...
                                    add access codes (a CSV file, or random ones
                                    printed once) and show their uses (see codes --help)
  waiting-room supply <room> [<units>]
                                    what is left to sell and how far down the
                                    line it is estimated to reach; with units,
                                    set it (docs/supply.md)
  waiting-room set <room> <setting>=<value>...
                                    change runtime settings, for example
                                    set concert new_users_per_minute=600 paused=false
  waiting-room rotate-key stage|promote
                                    rotate the signing key kept in Caddy's storage
                                    (see rotate-key --help)

` + runtimeSettingsHelp() + `
The admin endpoint is the one given by --address, else the one of the --config
file, else Caddy's default (localhost:2019).
`,
		CobraFunc: setupWaitingRoomCommand,
	})
}

// setupWaitingRoomCommand builds the waiting-room command's subcommands.
func setupWaitingRoomCommand(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.String("address", "", "The address of the admin API endpoint, if not the default")
	pf.StringP("config", "c", "", "Configuration file to read the admin address from, if --address is not used")
	pf.StringP("adapter", "a", "", "Name of the config adapter to apply (when --config is used)")
	pf.String("reason", "", "Why: kept with the change in the room's audit trail")

	status := &cobra.Command{
		Use:   "status [<room>]",
		Short: "Summarises one live room, or all of them",
		Args:  cobra.MaximumNArgs(1),
		RunE:  runStatus,
	}
	status.Flags().Bool("json", false, "Print the admin API's JSON instead of a summary")
	cmd.AddCommand(status)

	for action, short := range map[string]string{
		"pause":    "Stops admitting; waiting fans keep their place",
		"resume":   "Admits again after a pause",
		"sold-out": "Shows everyone the sold-out page",
		"reopen":   "Undoes sold-out",
	} {
		cmd.AddCommand(&cobra.Command{
			Use:   action + " <room>",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				var body any
				if b := withReason(cmd, nil); b != nil {
					body = b
				}
				return runChange(cmd, http.MethodPost, roomPath(args[0])+"/"+action, body)
			},
		})
	}
	cmd.AddCommand(auditCommand())
	cmd.AddCommand(codesCommand())
	cmd.AddCommand(supplyCommand())

	cmd.AddCommand(rotateKeyCommand())

	cmd.AddCommand(&cobra.Command{
		Use:   "set <room> <setting>=<value>...",
		Short: "Changes runtime settings of a room",
		Long:  "Changes runtime settings of a room, all of them or none.\n\n" + runtimeSettingsHelp(),
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := settingsFromArgs(args[1:])
			if err != nil {
				return err
			}
			return runChange(cmd, http.MethodPatch, roomPath(args[0]), withReason(cmd, body))
		},
	})
}

// runtimeSettingsHelp lists the settings `set` takes, with the form of each
// value, from the room's settings table: a list written by hand here went
// stale as settings were added (return_window, session_idle_timeout,
// join_limit and challenge were missing from it).
func runtimeSettingsHelp() string {
	var b strings.Builder
	b.WriteString("Runtime settings, each given as <setting>=<value> (quote a value with spaces):\n")
	for _, d := range waitingroom.SettingDefs() {
		if !d.Runtime {
			continue
		}
		n := d.Notation()
		line := "  " + d.Name + "=" + n.CLI
		if n.Note != "" {
			line = fmt.Sprintf("%-36s%s", line, strings.ReplaceAll(n.Note, "<setting>", d.Name))
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}

func roomPath(room string) string { return adminPrefix + url.PathEscape(room) }

// clientFor reaches the admin endpoint the flags point at.
func clientFor(cmd *cobra.Command) (*adminClient, error) {
	fl := cmd.Flags()
	address, _ := fl.GetString("address")
	config, _ := fl.GetString("config")
	adapter, _ := fl.GetString("adapter")
	addr, err := caddycmd.DetermineAdminAPIAddress(address, nil, config, adapter)
	if err != nil {
		return nil, fmt.Errorf("finding the admin API address: %w", err)
	}
	return newAdminClient(addr)
}

func runStatus(cmd *cobra.Command, args []string) error {
	c, err := clientFor(cmd)
	if err != nil {
		return err
	}
	path := adminPrefix
	if len(args) == 1 {
		path = roomPath(args[0])
	}
	data, err := c.do(http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		return printJSON(out, data)
	}
	var views []roomView
	if len(args) == 1 {
		var v roomView
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("reading the admin API's answer: %w", err)
		}
		views = append(views, v)
	} else {
		var list roomList
		if err := json.Unmarshal(data, &list); err != nil {
			return fmt.Errorf("reading the admin API's answer: %w", err)
		}
		views = list.Rooms
	}
	if len(views) == 0 {
		_, err := fmt.Fprintln(out, "No live waiting rooms.")
		return err
	}
	for i, v := range views {
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := writeSummary(out, v); err != nil {
			return err
		}
	}
	return nil
}

// runChange sends a change and prints the room's new state.
func runChange(cmd *cobra.Command, method, path string, body any) error {
	c, err := clientFor(cmd)
	if err != nil {
		return err
	}
	data, err := c.do(method, path, body)
	if err != nil {
		return err
	}
	return printJSON(cmd.OutOrStdout(), data)
}

func printJSON(w io.Writer, data []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(data), "", "  "); err != nil {
		buf.Reset()
		buf.Write(bytes.TrimSpace(data))
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// settingsFromArgs turns key=value arguments into a PATCH body, each value
// read by its setting's value type, which writes the admin API's notation. A name that is not a runtime setting is sent
// as a string, and the admin API says why it is refused.
func settingsFromArgs(args []string) (map[string]any, error) {
	body := make(map[string]any, len(args))
	for _, arg := range args {
		name, val, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: settings are given as <setting>=<value>", arg)
		}
		if _, dup := body[name]; dup {
			return nil, fmt.Errorf("%s: given twice", name)
		}
		rs, known := lookupSetting(name)
		if !known {
			body[name] = val
			continue
		}
		// Typed here, and text checked here: the JSON that carries it to the
		// admin API would turn broken UTF-8 into U+FFFD before the API saw it.
		var scratch waitingroom.Settings
		v := rs.Value(&scratch)
		if err := v.UnmarshalText([]byte(val)); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		body[name] = v
	}
	return body, nil
}
