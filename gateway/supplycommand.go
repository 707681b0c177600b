package gateway

import (
	"net/http"

	"github.com/spf13/cobra"

	"github.com/foyer-dev/foyer/waitingroom"
)

// supplyCommand is `foyer waiting-room supply <room> [<units>]`: prints the
// room's supply and its estimate, or sets it (docs/supply.md). A units that
// is not a whole number, 0 or more, is refused before anything is sent.
func supplyCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "supply <room> [<units>]",
		Short: "Shows a room's supply and its estimate, or sets what is left to sell",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := roomPath(args[0]) + "/" + supplyRoute
			if len(args) == 1 {
				return runChange(cmd, http.MethodGet, path, nil)
			}
			units, err := waitingroom.ParseSupply(args[1])
			if err != nil {
				return err
			}
			return runChange(cmd, http.MethodPost, path, withReason(cmd, map[string]any{"units": units}))
		},
	}
}
