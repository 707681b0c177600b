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
that a draw gave a fan: it checks that the revealed seed hashes to the
commitment published before the pre-queue opened, finds the draw that covered
the fan's order key (the pre-queue's, or a rolling draw of the random method),
recomputes the place with the published permutation (feistel-hmac-sha256-v1),
and says in which admission the line reached that place, and when.

The draw index is the fan's order key, the number the room gave them when they
joined; their status (JSON) and waiting page show it as draw_index. Places
count from 0: place 0 was first in line. docs/PROTOCOL.md specifies every step,
so that anyone can write their own verifier.
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
	fmt.Fprintf(out, "draw_index %d (the fan's order key) has place %d (0-based: %s in line)\n", index, place, aheadOf(place))
	fmt.Fprintf(out, "placed by %s\n", drawOf(rep, index))
	if adm == nil {
		fmt.Fprintln(out, "the line never reached that place: the sale ended first")
		return nil
	}
	fmt.Fprintf(out, "let in at %s, with places %d-%d (the line reached them then; a place nobody had been seen at was passed over)\n",
		adm.At.UTC().Format(time.RFC3339Nano), adm.Start, adm.Start+adm.Count-1)
	if !rep.Complete {
		fmt.Fprintln(out, "note: the report's history is incomplete (the room's store lost part of it)")
	}
	return nil
}

// drawOf names the draw of a report that covered an order key VerifyPlace
// placed: the pre-queue's, or a rolling draw of the random method.
func drawOf(rep waitingroom.FairnessReport, index uint64) string {
	if rep.DrawSize != nil && index < *rep.DrawSize {
		return fmt.Sprintf("the pre-queue's draw of order keys 0-%d", *rep.DrawSize-1)
	}
	for _, e := range rep.Epochs {
		if index >= e.Start && index < e.Start+e.Count {
			return fmt.Sprintf("rolling draw epoch %d of order keys %d-%d", e.Number, e.Start, e.Start+e.Count-1)
		}
	}
	return "no draw"
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
