package gateway

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// loadKeys reads the keys of a room: the one that signs (the file at path, or
// with no path the key kept in Caddy's storage) and those that only verify
// (the files listed as previous, and with no path the staged and previous keys
// kept in storage beside the current one).
func loadKeys(ctx caddy.Context, path string, previous []string, now time.Time) (*waitingroom.SigningKey, []*waitingroom.SigningKey, error) {
	var (
		current *waitingroom.SigningKey
		others  []*waitingroom.SigningKey
		err     error
	)
	if path != "" {
		if current, err = readKeyFile(path); err != nil {
			return nil, nil, fmt.Errorf("signing_key: %w", err)
		}
	} else {
		storage := ctx.Storage()
		if storage == nil {
			return nil, nil, fmt.Errorf("signing_key: none given and no Caddy storage to keep a generated one")
		}
		if current, others, err = loadStoredKeys(ctx, storage, now); err != nil {
			return nil, nil, fmt.Errorf("signing_key: %w", err)
		}
		// Storage holding more keys than a node verifies with (written by
		// an older rotate-key, or by hand) must not stop the node: it
		// leaves out the oldest, which signed least of what is still out
		// there, and says so. "Rotating the signing key" in
		// docs/operations.md tells how rotate-key keeps within the bound.
		if room := max(waitingroom.MaxVerifyingKeys-len(previous), 0); len(others) > room {
			var left []string
			for _, k := range others[room:] {
				left = append(left, k.KeyID())
			}
			ctx.Logger().Warn("Caddy storage holds more verifying keys than a node uses; the oldest are left out, and what only they signed is refused",
				zap.Int("keys", len(others)), zap.Int("at_most", room), zap.Strings("left_out", left))
			others = others[:room]
		}
	}
	for _, p := range previous {
		k, err := readKeyFile(p)
		if err != nil {
			return nil, nil, fmt.Errorf("previous_signing_keys: %w", err)
		}
		others = append(others, k)
	}
	if _, err := waitingroom.NewKeyring(current, others...); err != nil {
		return nil, nil, fmt.Errorf("previous_signing_keys: %w", err)
	}
	return current, others, nil
}

func readKeyFile(path string) (*waitingroom.SigningKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := waitingroom.ParseSigningKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// loggedKeys is, by room, the keys this process last wrote a line about, so
// that a room's keys are logged when they are first loaded and when they
// change (a rotation, a new signing_key), not at every reload or by every
// handler of the room.
var loggedKeys sync.Map // room ID -> string of key IDs

// logKeysLoaded writes which keys a room signs and verifies with, once per
// set of keys: an operator rotating a key reads in the log that every node
// took it up. Only key IDs are written, never key material.
func logKeysLoaded(log *zap.Logger, room, path string, current *waitingroom.SigningKey, previous []*waitingroom.SigningKey) {
	verifying := make([]string, 0, len(previous))
	for _, k := range previous {
		verifying = append(verifying, k.KeyID())
	}
	slices.Sort(verifying)
	set := current.KeyID() + " " + strings.Join(verifying, ",")
	if last, ok := loggedKeys.Swap(room, set); ok && last == set {
		return
	}
	source := "Caddy storage"
	if path != "" {
		source = path
	}
	log.Info("waiting room signing key loaded", zap.String("room", room), zap.String("kid", current.KeyID()),
		zap.String("from", source), zap.Strings("verifying_kids", verifying))
}
