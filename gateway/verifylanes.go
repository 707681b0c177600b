package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/foyer-dev/foyer/waitingroom"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "verify-lanes",
		Usage: "--report <file or URL>",
		Short: "Checks from a room's fairness report that its priority lanes kept their weights",
		Long: `
Checks, from a room's fairness report alone (GET <path_prefix>/fairness once the
room has closed or sold out, saved to a file or given as its URL), that its
priority lanes were run as published: the weights match the commitment the
draw endpoint showed before the room opened, every controller step's split
between the lanes is the weighted round robin's under those weights (replayed
step by step), each lane's share stayed within one admission step of its
weight whenever the same lanes waited, and each lane was let in first come,
first served, so that no fan's position in any lane rose. It exits with
status 1, naming every problem, when a check fails. docs/fairness.md
("Priority lanes") specifies every step.
`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("report", "", "The fairness report: a file, or an http(s) URL")
			_ = cmd.MarkFlagRequired("report")
			cmd.RunE = runVerifyLanes
		},
	})
}

func runVerifyLanes(cmd *cobra.Command, _ []string) error {
	src, _ := cmd.Flags().GetString("report")
	raw, err := readReport(src)
	if err != nil {
		return err
	}
	var rep waitingroom.FairnessReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		return fmt.Errorf("the report is not a fairness report's JSON: %w", err)
	}
	if rep.Lanes == nil {
		return fmt.Errorf("room %s had no priority lanes: its fans were let in in one line", rep.Room)
	}
	return printLaneCheck(cmd.OutOrStdout(), rep.Room, *rep.Lanes, waitingroom.CheckLanes(*rep.Lanes))
}

// printLaneCheck says what CheckLanes found, and fails when it found a
// problem.
func printLaneCheck(out io.Writer, room string, rep waitingroom.LanesReport, c waitingroom.LaneCheck) error {
	if c.OK || rep.Commitment == waitingroom.LaneCommitment(rep.Weights) {
		fmt.Fprintf(out, "room %s: lanes %s match the commitment %s\n", room, rep.Weights, rep.Commitment)
	}
	fmt.Fprintf(out, "%d steps replayed (%d restarts); shares within %.2f places of the weights (one step is at most %d, plus one place)\n",
		c.Steps, c.Restarts, c.MaxDeviation, c.MaxStep)
	var lanes []string
	for _, l := range rep.Lanes {
		lanes = append(lanes, fmt.Sprintf("%s %d", l.Name, l.Admitted))
	}
	order := "each in order"
	if !c.InOrder {
		order = "NOT all in order"
	}
	fmt.Fprintf(out, "let in: %s; %s\n", strings.Join(lanes, ", "), order)
	if c.OK {
		fmt.Fprintln(out, "ok")
		return nil
	}
	for _, p := range c.Problems {
		fmt.Fprintln(out, "problem: "+p)
	}
	return errors.New("the lanes check failed")
}
