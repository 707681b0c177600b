package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// The command line's side of the audit trail: it names its node on every
// change, passes the operator's --reason, and prints a room's trail.

// cliOperator is what the command line sends as operatorHeader: "cli on"
// the machine it runs on.
func cliOperator() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown host"
	}
	return "cli on " + host
}

// withReason adds the --reason flag's text to a change's body.
func withReason(cmd *cobra.Command, body map[string]any) map[string]any {
	reason, _ := cmd.Flags().GetString("reason")
	if reason == "" {
		return body
	}
	if body == nil {
		body = map[string]any{}
	}
	body[reasonField] = reason
	return body
}

func auditCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "audit <room> [--after <seq>] [--limit <n>] [--json]",
		Short: "Prints a room's audit trail: every change, when, by whom, old and new values",
		Args:  cobra.ExactArgs(1),
		RunE:  runAudit,
	}
	c.Flags().Uint64("after", 0, "Print the entries after this seq")
	c.Flags().Int("limit", auditPage, "The most entries to print")
	c.Flags().Bool("json", false, "Print the admin API's JSON instead")
	return c
}

func runAudit(cmd *cobra.Command, args []string) error {
	c, err := clientFor(cmd)
	if err != nil {
		return err
	}
	fl := cmd.Flags()
	after, _ := fl.GetUint64("after")
	limit, _ := fl.GetInt("limit")
	path := roomPath(args[0]) + "/audit?after=" + strconv.FormatUint(after, 10) + "&limit=" + strconv.Itoa(limit)
	data, err := c.do(http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON, _ := fl.GetBool("json"); asJSON {
		return printJSON(out, data)
	}
	var a auditAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return fmt.Errorf("reading the admin API's answer: %w", err)
	}
	return writeAudit(out, a)
}

// writeAudit prints a page of the trail, an entry a line.
func writeAudit(out io.Writer, a auditAnswer) error {
	if len(a.Entries) == 0 {
		_, err := fmt.Fprintf(out, "No changes recorded for %s.\n", a.Room)
		return err
	}
	for _, e := range a.Entries {
		changes := make([]string, len(e.Changes))
		for i, ch := range e.Changes {
			changes[i] = ch.Setting + " " + string(ch.Old) + " → " + string(ch.New)
		}
		line := fmt.Sprintf("%d  %s  %-12s %s  by %s", e.Seq, e.At.UTC().Format(time.RFC3339), e.Action, strings.Join(changes, ", "), e.Who)
		if e.Note != "" {
			line += "  (" + e.Note + ")"
		}
		if _, err := fmt.Fprintln(out, line); err != nil {
			return err
		}
	}
	if a.Next != nil {
		_, err := fmt.Fprintf(out, "More: waiting-room audit %s --after %d\n", a.Room, *a.Next)
		return err
	}
	return nil
}

// recordRotation tells each live room of the node at kr.addr, just reloaded,
// of a key rotation, for its audit trail, and says which recorded it. A room
// with its own signing_key refuses (it did not take the key up), and the
// rotation stands whatever the trail says.
func recordRotation(out io.Writer, kr keyRotation) {
	c, err := newAdminClient(kr.addr)
	if err != nil {
		fmt.Fprintf(out, "Not recorded in any audit trail: %v\n", err)
		return
	}
	data, err := c.do(http.MethodGet, adminPrefix, nil)
	var list roomList
	if err == nil {
		err = json.Unmarshal(data, &list)
	}
	if err != nil {
		fmt.Fprintf(out, "Not recorded in any audit trail: %v\n", err)
		return
	}
	var recorded []string
	for _, v := range list.Rooms {
		if _, err := c.do(http.MethodPost, roomPath(v.Room)+"/key-rotation", kr); err != nil {
			fmt.Fprintf(out, "Not recorded in the audit trail of %s: %v\n", v.Room, err)
			continue
		}
		recorded = append(recorded, v.Room)
	}
	if len(recorded) > 0 {
		fmt.Fprintf(out, "Recorded in the audit trail of: %s\n", strings.Join(recorded, ", "))
	}
}
