package gateway

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/spf13/cobra"
)

// codesCommand is `foyer waiting-room codes`: a room's access codes through
// the admin API (admincodes.go, docs/codes.md). Every subcommand prints CSV.
func codesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "codes add|generate|usage <room> ...",
		Short: "Adds a room's access codes and shows their uses",
		Long: `Adds access codes to a room and shows how many times each was used. Codes
belong to one of the room's lanes (the lanes setting; general without it); the store keeps only
their keyed hashes (the ids).

  codes add <room> <file.csv>        add the codes of a CSV file (code,lane,max_uses
                                     lines; "-" reads standard input); prints each
                                     code with its id
  codes generate <room> --lane <lane> --count <n> [--max-uses <m>]
                                     add n random codes and print them as CSV: the
                                     only time they are shown, keep the output
  codes usage <room> [--used]        every code's id, lane, max_uses and uses`,
	}
	add := &cobra.Command{
		Use:   "add <room> <file.csv>",
		Short: "Adds the codes of a CSV file (code,lane,max_uses)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var data []byte
			var err error
			if args[1] == "-" {
				data, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), maxCodeBody+1))
			} else {
				data, err = os.ReadFile(args[1])
			}
			if err != nil {
				return fmt.Errorf("reading the codes: %w", err)
			}
			path := codesPath(args[0])
			if reason, _ := cmd.Flags().GetString("reason"); reason != "" {
				path += "?" + reasonField + "=" + url.QueryEscape(reason)
			}
			return runCodes(cmd, http.MethodPost, path, "text/csv", data)
		},
	}
	generate := &cobra.Command{
		Use:   "generate <room> --lane <lane> --count <n> [--max-uses <m>]",
		Short: "Adds random codes for a lane and prints them as CSV, once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			var g codeGenerate
			g.Lane, _ = fl.GetString("lane")
			g.Generate, _ = fl.GetInt("count")
			g.MaxUses, _ = fl.GetInt("max-uses")
			g.Reason, _ = fl.GetString("reason")
			return runCodes(cmd, http.MethodPost, codesPath(args[0]), "", g)
		},
	}
	generate.Flags().String("lane", "", "The lane the codes are for (one of the room's lanes)")
	generate.Flags().Int("count", 0, "How many codes to make")
	generate.Flags().Int("max-uses", 1, "How many times each code may be used")
	usage := &cobra.Command{
		Use:   "usage <room> [--used]",
		Short: "Prints every code's id, lane, max_uses and uses as CSV",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := codesPath(args[0])
			if used, _ := cmd.Flags().GetBool("used"); used {
				path += "?used=true"
			}
			return runCodes(cmd, http.MethodGet, path, "", nil)
		},
	}
	usage.Flags().Bool("used", false, "Only the codes used at least once")
	cmd.AddCommand(add, generate, usage)
	return cmd
}

func codesPath(room string) string { return roomPath(room) + "/codes" }

// runCodes calls the codes endpoint, with a raw body of contentType or, when
// contentType is "", body as JSON, and prints the CSV it answers.
func runCodes(cmd *cobra.Command, method, path, contentType string, body any) error {
	c, err := clientFor(cmd)
	if err != nil {
		return err
	}
	var data []byte
	if raw, ok := body.([]byte); ok && contentType != "" {
		data, err = c.send(method, path, contentType, raw)
	} else {
		data, err = c.do(method, path, body)
	}
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(data)
	return err
}
