package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
		Use:   "rotate-key stage | promote [--retain <duration>] [--retire-early] [--no-reload]",
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

After changing the storage, the command reloads the node whose admin endpoint
the --config file (or --address) names, with force: the keys live in storage,
not in the configuration, and a reload of an unchanged configuration does
nothing without it. Reload every other node that shares the storage with
"foyer reload --force --config <file>". --no-reload skips the reload, where no
node runs.

A node verifies with at most 4 keys besides the one that signs. Each step
retires the previous keys past their retention, and says so; when 4 keys
within their retention are left, it refuses rather than leave every node
unable to start, unless --retire-early lets it retire the oldest of them now.

The storage is the one of the --config file (Caddy's default storage if it
names none); run the command as the user Caddy runs as.
`,
		Args: cobra.ExactArgs(1),
		RunE: runRotateKey,
	}
	c.Flags().String("retain", defaultKeyRetention.String(), "How long the old key keeps verifying after promote: at least max(ticket_lifetime, session_duration)")
	c.Flags().Bool("retire-early", false, "When 4 previous keys still verify, retire the oldest now instead of refusing")
	c.Flags().Bool("no-reload", false, "Change the storage only; reload no node")
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
	early, _ := fl.GetBool("retire-early")
	noReload, _ := fl.GetBool("no-reload")
	config, _ := fl.GetString("config")
	adapter, _ := fl.GetString("adapter")
	address, _ := fl.GetString("address")
	cfg, configFile, adapterUsed, err := caddycmd.LoadConfig(config, adapter)
	if err != nil {
		return fmt.Errorf("reading the configuration: %w", err)
	}
	storage, closeStorage, err := configStorage(cfg)
	if err != nil {
		return err
	}
	defer closeStorage()
	ctx, out, now := context.Background(), cmd.OutOrStdout(), time.Now()
	var (
		done, next string
		retired    []retiredKey
		rotation   = keyRotation{Step: args[0]}
	)
	rotation.Reason, _ = fl.GetString("reason")
	if args[0] == "stage" {
		var kid string
		kid, retired, err = stageStoredKey(ctx, storage, now, early)
		printRetired(out, retired)
		if err != nil {
			return err
		}
		done, rotation.NewKeyID = fmt.Sprintf("Staged key %s.", kid), kid
		next = fmt.Sprintf("Check that each node's jwks.json lists %s, then run: rotate-key promote", kid)
	} else {
		var oldKID, newKID string
		oldKID, newKID, retired, err = promoteStoredKey(ctx, storage, retain, now, early)
		printRetired(out, retired)
		if err != nil {
			return err
		}
		done = fmt.Sprintf("Key %s now signs; %s verifies until %s.", newKID, oldKID, now.Add(retain).UTC().Format(time.RFC3339))
		rotation.OldKeyID, rotation.NewKeyID = oldKID, newKID
	}
	others := "Reload every node that shares this storage"
	if !noReload {
		addr, err := reloadNode(address, cfg, configFile, adapter, adapterUsed)
		if err != nil {
			return fmt.Errorf("%s The storage is changed, but reloading the node failed: %w. "+
				"Reload every node that shares this storage with: foyer reload --force --config <its Caddyfile> "+
				"(without --force a reload of an unchanged configuration does nothing); do not run this step again", done, err)
		}
		done += fmt.Sprintf("\nReloaded the node at %s.", addr)
		others = "Reload every other node that shares this storage"
		rotation.addr = addr
	}
	msg := fmt.Sprintf("%s\n%s with: foyer reload --force --config <its Caddyfile>\n", done, others)
	if next != "" {
		msg += next + "\n"
	}
	if _, err = io.WriteString(out, msg); err != nil || rotation.addr == "" {
		return err
	}
	// Once the node signs or verifies with the new key, its rooms record the
	// rotation in their audit trails.
	recordRotation(out, rotation)
	return nil
}

// printRetired says which previous keys a step retired, and for those retired
// early what that costs.
func printRetired(out io.Writer, retired []retiredKey) {
	for _, r := range retired {
		at := r.dropAfter.UTC().Format(time.RFC3339)
		if r.early {
			fmt.Fprintf(out, "Retired key %s early (its retention ran until %s): tickets and passes only it signed are refused from each node's next reload.\n", r.kid, at)
		} else {
			fmt.Fprintf(out, "Retired key %s: its retention ended at %s.\n", r.kid, at)
		}
	}
}

// reloadNode sends the configuration to the node's admin endpoint as `caddy
// reload --force` does: forced, since the configuration is unchanged and only
// the keys in storage are new. It returns the admin address it reached.
func reloadNode(address string, cfg []byte, configFile, adapter, adapterUsed string) (string, error) {
	if configFile == "" || len(cfg) == 0 {
		return "", errors.New("no configuration file to reload with (give --config, or --no-reload)")
	}
	addr, err := caddycmd.DetermineAdminAPIAddress(address, cfg, configFile, adapter)
	if err != nil {
		return "", fmt.Errorf("finding the admin API address: %w", err)
	}
	headers := make(http.Header)
	headers.Set("Cache-Control", "must-revalidate")
	headers.Set("Caddy-Config-Source-File", configFile)
	headers.Set("Caddy-Config-Source-Adapter", adapterUsed)
	resp, err := caddycmd.AdminAPIRequest(addr, http.MethodPost, "/load", headers, bytes.NewReader(cfg))
	if err != nil {
		return addr, fmt.Errorf("at %s: %w", addr, err)
	}
	resp.Body.Close()
	return addr, nil
}

// configStorage opens the storage the configuration (JSON) names, or Caddy's
// default storage, the one a running Caddy with that configuration uses. The
// storage is usable until the returned function is called.
func configStorage(cfg []byte) (certmagic.Storage, func(), error) {
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
