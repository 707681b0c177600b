package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/foyer-dev/foyer/waitingroom"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "verify-draw",
		Usage: "--report <file or URL> --draw-index <n>",
		Short: "Recomputes a fan's place from a room's published fairness report",
		Long: `
Recomputes, from a room's fairness report (GET <path_prefix>/fairness once the
room has closed or sold out, saved to a file or given as its URL), the place
that a draw gave a fan: it checks the algorithm (feistel-hmac-sha256-v1) and
that the revealed seed hashes to the commitment published before the
pre-queue opened, finds the draw that covered the fan's order key (the
pre-queue's, or a rolling draw of the random method), recomputes the place
with the published permutation, and says in which admission the line reached
that place, and when. A key no draw covered was placed first come, first
served (its place is the key), or, in a random room, was still waiting for a
draw when the sale ended.

Given the draw endpoint's answer (GET <path_prefix>/draw) instead, it
recomputes the place of a key that the pre-queue's draw or one of the rolling
draws it lists covered, and nothing more: that answer lists only the latest
64 rolling draws and no admission.

The draw index is the fan's order key, the number the room gave them when they
joined; their status (JSON) and waiting page show it as draw_index in every
state, in a room that draws. Places
count from 0: place 0 was first in line. docs/PROTOCOL.md specifies every step,
so that anyone can write their own verifier.
`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("report", "", "The fairness report (or the draw endpoint's answer): a file, or an http(s) URL")
			cmd.Flags().Uint64("draw-index", 0, "The fan's draw_index")
			_ = cmd.MarkFlagRequired("report")
			_ = cmd.MarkFlagRequired("draw-index")
			cmd.RunE = runVerifyDraw
		},
	})
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
first served, so that no fan's position in any lane rose. A room with phases
is checked step by step against the weights of the phase in force at each
step, as the report lists them, and each phase's weights against their
commitment, which must be dated before the phase's start. It exits with
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

func runVerifyDraw(cmd *cobra.Command, _ []string) error {
	index, _ := cmd.Flags().GetUint64("draw-index")
	raw, err := readReport(cmd)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("the report is not a fairness report's JSON: %w", err)
	}
	out := cmd.OutOrStdout()
	if _, ok := fields["counts"]; !ok {
		if _, ok := fields["enabled"]; ok {
			return verifyFromDrawInfo(out, raw, index)
		}
		return errors.New("the report is neither a fairness report (it has no counts) nor the draw endpoint's answer (it has no enabled)")
	}
	rep, err := decodeFairnessReport(raw)
	if err != nil {
		return err
	}
	v, err := waitingroom.VerifyPlace(rep, index)
	if errors.Is(err, waitingroom.ErrNoDraw) {
		// Said plainly, as the report's page says "No draw": there is no
		// seed to check, rather than a seed that is wrong.
		return fmt.Errorf("room %s made no draw: its fans were let in first come, first served, in the order of their keys, so there is no place to recompute; the report's admissions say when each key was let in", rep.Room)
	}
	if err != nil {
		return err
	}
	printCommitment(out, rep.Room, v)
	switch {
	case v.By == waitingroom.NotPlaced:
		fmt.Fprintf(out, "draw_index %d (the fan's order key) has no place: it was waiting for the next rolling draw when the sale ended, and the line never reached it\n", index)
	default:
		printPlace(out, v)
		switch {
		case v.Admission != nil:
			fmt.Fprintf(out, "let in at %s, with places %d-%d (the line reached them then; a place nobody had been seen at was passed over)\n",
				v.Admission.At.UTC().Format(time.RFC3339Nano), v.Admission.Start, v.Admission.Start+v.Admission.Count-1)
		case v.Reached:
			// Below serving with no admission: only a report whose
			// history was lost can say so (docs/PROTOCOL.md).
			fmt.Fprintln(out, "the line reached that place, but the report no longer has the admission that did")
		default:
			fmt.Fprintln(out, "the line never reached that place: the sale ended first")
		}
	}
	if !rep.Complete {
		fmt.Fprintln(out, "note: the report's history is incomplete (the room's store lost part of it)")
	}
	return nil
}

// verifyFromDrawInfo recomputes a place from the draw endpoint's answer,
// which has the seed (once shown) and the draws, but lists only the latest
// rolling draws and no admission: it places a key one of those draws
// covered, and says that when the line reached it is the report's to tell.
func verifyFromDrawInfo(out io.Writer, raw []byte, index uint64) error {
	var info waitingroom.DrawInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return fmt.Errorf("the draw endpoint's answer is not valid: %w", err)
	}
	v, err := waitingroom.VerifyDrawInfo(info, index)
	if errors.Is(err, waitingroom.ErrNoDraw) {
		return fmt.Errorf("room %s made no draw (the draw endpoint says enabled false): its fans are let in first come, first served, so there is no place to recompute", info.Room)
	}
	if err != nil {
		return fmt.Errorf("room %s: %w", info.Room, err)
	}
	printCommitment(out, info.Room, v)
	printPlace(out, v)
	fmt.Fprintln(out, "note: this is the draw endpoint's answer, not the fairness report: it lists no admissions, so whether and when the line reached that place is the report's to tell")
	return nil
}

// printCommitment prints the first line: the seed that was checked, or
// that no draw covered the key in a room whose only draws are its phases'.
func printCommitment(out io.Writer, room string, v waitingroom.Verdict) {
	if v.Commitment == "" {
		fmt.Fprintf(out, "room %s: no draw covered draw_index %d (the room draws only in its phases)\n", room, v.Index)
		return
	}
	fmt.Fprintf(out, "room %s: the seed matches the commitment %s\n", room, v.Commitment)
}

// printPlace prints the place of a verdict that has one, and what gave it.
func printPlace(out io.Writer, v waitingroom.Verdict) {
	fmt.Fprintf(out, "draw_index %d (the fan's order key) has place %d (0-based: %s in line)\n", v.Index, v.Place, aheadOf(v.Place))
	switch v.By {
	case waitingroom.PlacedByPrequeue:
		fmt.Fprintf(out, "placed by the pre-queue's draw of order keys 0-%d\n", v.DrawSize-1)
	case waitingroom.PlacedByEpoch:
		fmt.Fprintf(out, "placed by rolling draw epoch %d of order keys %d-%d\n", v.Epoch.Number, v.Epoch.Start, v.Epoch.Start+v.Epoch.Count-1)
	case waitingroom.PlacedByPhase:
		var first uint64
		if v.Phase.FirstKey != nil {
			first = *v.Phase.FirstKey
		}
		fmt.Fprintf(out, "placed by phase %s's draw of order keys %d-%d, at its start %s\n", v.Phase.Phase, first, first+v.DrawSize-1,
			v.Phase.Start.UTC().Format(time.RFC3339Nano))
		if !v.Phase.CommittedInTime() {
			fmt.Fprintf(out, "warning: phase %s's report does not show its seed committed before its pre-queue opened\n", v.Phase.Phase)
		}
	default:
		fmt.Fprintf(out, "placed first come, first served: no draw covered order key %d, so the place is the order key\n", v.Index)
	}
}

func runVerifyLanes(cmd *cobra.Command, _ []string) error {
	raw, err := readReport(cmd)
	if err != nil {
		return err
	}
	rep, err := decodeFairnessReport(raw)
	if err != nil {
		return err
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
	for _, p := range rep.Phases {
		var in []string
		for _, l := range p.Lanes {
			in = append(in, fmt.Sprintf("%s %d", l.Name, l.Admitted))
		}
		fmt.Fprintf(out, "%s; let in: %s\n", p, strings.Join(in, ", "))
	}
	if c.OK {
		fmt.Fprintln(out, "ok")
		return nil
	}
	for _, p := range c.Problems {
		fmt.Fprintln(out, "problem: "+p)
	}
	return errors.New("the lanes check failed")
}

// readReport reads the report that the --report flag names from a file, or
// fetches it from a URL, asking for JSON and reading at most 64 MiB.
func readReport(cmd *cobra.Command) ([]byte, error) {
	const maxReport = 64 << 20
	src, _ := cmd.Flags().GetString("report")
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(io.LimitReader(f, maxReport))
	}
	req, err := http.NewRequest(http.MethodGet, src, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReport))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %d: %s", src, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// decodeFairnessReport decodes a fairness report read by readReport.
func decodeFairnessReport(raw []byte) (waitingroom.FairnessReport, error) {
	var rep waitingroom.FairnessReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		return rep, fmt.Errorf("the report is not a fairness report's JSON: %w", err)
	}
	return rep, nil
}
