package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/caddyserver/certmagic"
	"github.com/spf13/cobra"
)

// defaultKeyRetention is how long a promoted-away key keeps verifying: the
// default ticket_lifetime, which outlasts any session_duration.
const defaultKeyRetention = 12 * time.Hour

func rotateKeyCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "rotate-key stage | promote [--retain <duration>]",
		Short: "Rotates the signing key kept in Caddy's storage (rooms without signing_key)",
		Long: `
Rotates the signing key that rooms without signing_key keep in Caddy's storage,
in two steps, each followed by a reload of every node that shares the storage:

  rotate-key stage      generate the next key; nodes that load it publish it
                        in jwks.json and accept what it signs, but do not sign
                        with it yet
  rotate-key promote    sign with the staged key; the old one keeps verifying
                        tickets and passes for --retain (default 12h, the
                        default ticket_lifetime), then is dropped

The storage is the one of the --config file (Caddy's default storage if it
names none); run the command as the user Caddy runs as.
`,
		Args: cobra.ExactArgs(1),
		RunE: runRotateKey,
	}
	c.Flags().String("retain", defaultKeyRetention.String(), "How long the old key keeps verifying after promote: at least max(ticket_lifetime, session_duration)")
	return c
}

func runRotateKey(cmd *cobra.Command, args []string) error {
	fl := cmd.Flags()
	var retain time.Duration
	switch args[0] {
	case "stage":
	case "promote":
		raw, _ := fl.GetString("retain")
		d, err := caddy.ParseDuration(raw)
		if err != nil || d <= 0 {
			return fmt.Errorf("--retain: %q is not a positive duration", raw)
		}
		retain = d
	default:
		return fmt.Errorf("rotate-key: %q is neither stage nor promote", args[0])
	}
	config, _ := fl.GetString("config")
	adapter, _ := fl.GetString("adapter")
	storage, closeStorage, err := configStorage(config, adapter)
	if err != nil {
		return err
	}
	defer closeStorage()
	ctx, out := context.Background(), cmd.OutOrStdout()
	if args[0] == "stage" {
		kid, err := stageStoredKey(ctx, storage)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "Staged key %s.\nReload every node, check that each one's jwks.json lists it, then run: rotate-key promote\n", kid)
		return err
	}
	now := time.Now()
	oldKID, newKID, err := promoteStoredKey(ctx, storage, retain, now)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Key %s now signs; %s verifies until %s.\nReload every node.\n",
		newKID, oldKID, now.Add(retain).UTC().Format(time.RFC3339))
	return err
}

// configStorage opens the storage the configuration file names, or Caddy's
// default storage, the one a running Caddy with that file uses. The storage is
// usable until the returned function is called.
func configStorage(configFile, adapter string) (certmagic.Storage, func(), error) {
	cfg, _, _, err := caddycmd.LoadConfig(configFile, adapter)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the configuration: %w", err)
	}
	var sv struct {
		StorageRaw json.RawMessage `json:"storage,omitempty" caddy:"namespace=caddy.storage inline_key=module"`
	}
	if len(cfg) > 0 {
		if err := json.Unmarshal(cfg, &sv); err != nil {
			return nil, nil, fmt.Errorf("reading the configuration's storage: %w", err)
		}
	}
	if sv.StorageRaw == nil {
		return caddy.DefaultStorage, func() {}, nil
	}
	// Storage modules may hold connections for as long as their context lives.
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	mod, err := ctx.LoadModule(&sv, "StorageRaw")
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("loading the configuration's storage: %w", err)
	}
	conv, ok := mod.(caddy.StorageConverter)
	if !ok {
		cancel()
		return nil, nil, fmt.Errorf("storage module %T cannot be opened", mod)
	}
	st, err := conv.CertMagicStorage()
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return st, cancel, nil
}
