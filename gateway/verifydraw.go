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
room has closed or sold out, saved to a file or given as its URL), the place a
fan's draw_index gave them: it checks the revealed seed against the commitment
published before the pre-queue opened, recomputes the place with the published
algorithm (feistel-hmac-sha256-v1; the README's "Checking the draw"), and says
in which admission that place was let in, and when.

The draw_index is on the fan's status (JSON) and their waiting page while they
waited. A place is a 0-based order key: place 0 was first in line.
`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("report", "", "The fairness report: a file, or an http(s) URL")
			cmd.Flags().Uint64("draw-index", 0, "The fan's draw_index")
			_ = cmd.MarkFlagRequired("report")
			_ = cmd.MarkFlagRequired("draw-index")
			cmd.RunE = runVerifyDraw
		},
	})
}

func runVerifyDraw(cmd *cobra.Command, _ []string) error {
	src, _ := cmd.Flags().GetString("report")
	index, _ := cmd.Flags().GetUint64("draw-index")
	raw, err := readReport(src)
	if err != nil {
		return err
	}
	var rep waitingroom.FairnessReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		return fmt.Errorf("the report is not a fairness report's JSON: %w", err)
	}
	place, adm, err := waitingroom.VerifyPlace(rep, index)
	if errors.Is(err, waitingroom.ErrNoDraw) {
		// Said plainly, as the report's page says "No draw": there is no
		// seed to check, rather than a seed that is wrong.
		return fmt.Errorf("room %s made no draw: its fans were let in first come, first served, in the order of their keys, so there is no place to recompute; the report's admissions say when each key was let in", rep.Room)
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "room %s: the seed matches the commitment %s\n", rep.Room, rep.Commitment)
	fmt.Fprintf(out, "draw_index %d has place %d (0-based: %s in the draw's order)\n", index, place, aheadOf(place))
	if adm == nil {
		fmt.Fprintln(out, "that place was never let in: the sale ended first")
		return nil
	}
	fmt.Fprintf(out, "let in at %s, with places %d-%d\n", adm.At.UTC().Format(time.RFC3339Nano), adm.Start, adm.Start+adm.Count-1)
	if !rep.Complete {
		fmt.Fprintln(out, "note: the report's history is incomplete (the room's store lost part of it)")
	}
	return nil
}

// readReport reads a report from a file or fetches it from a URL, asking for
// JSON and reading at most 64 MiB.
func readReport(src string) ([]byte, error) {
	const maxReport = 64 << 20
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
