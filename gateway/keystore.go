package gateway

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Keys kept in Caddy's storage, for rooms configured without signing_key. Every
// node sharing that storage (a shared file system, or a storage module backed
// by a database) uses the same keys, and a restart keeps passes valid.
//
// A rotation goes in two steps, each followed by a reload of every node, so that
// every node verifies with a new key before any node signs with it:
//
//  1. stage: a new key is generated and kept as the next key. Nodes that load
//     it publish it and accept what it signs, but still sign with the current.
//  2. promote: the next key becomes the current one; the old current key is
//     kept as a previous key, with the time after which it is dropped.
const (
	signingKeyStorageKey   = "waiting_room/signing_key_ed25519.pem"
	nextKeyStorageKey      = "waiting_room/signing_key_next_ed25519.pem"
	previousKeysStorageDir = "waiting_room/previous_signing_keys"
	// dropAfterHeader is the PEM header of a previous key saying when it stops
	// being trusted.
	dropAfterHeader = "Drop-After"
)

// loadStoredKeys returns the current key kept in storage, generating and
// storing one the first time, and the keys that still verify: the staged next
// key and every previous key not yet past its retention, newest first, so
// that the keys most likely to have signed a fan's ticket are tried first and
// a node that must leave some out (see loadKeys) leaves out the oldest.
func loadStoredKeys(ctx context.Context, storage certmagic.Storage, now time.Time) (*waitingroom.SigningKey, []*waitingroom.SigningKey, error) {
	current, err := loadOrCreateStoredKey(ctx, storage)
	if err != nil {
		return nil, nil, err
	}
	var others []*waitingroom.SigningKey
	if next, err := loadStoredKey(ctx, storage, nextKeyStorageKey); err == nil {
		others = append(others, next)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	prev, err := loadPreviousKeys(ctx, storage, now)
	if err != nil {
		return nil, nil, err
	}
	slices.Reverse(prev)
	return current, append(others, prev...), nil
}

func loadOrCreateStoredKey(ctx context.Context, storage certmagic.Storage) (*waitingroom.SigningKey, error) {
	if k, err := loadStoredKey(ctx, storage, signingKeyStorageKey); !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	// Two nodes starting at once on shared storage must not each make their own.
	unlock, err := lockKeys(ctx, storage)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if k, err := loadStoredKey(ctx, storage, signingKeyStorageKey); !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		return nil, err
	}
	if err := storeKey(ctx, storage, signingKeyStorageKey, key, nil); err != nil {
		return nil, fmt.Errorf("storing generated key: %w", err)
	}
	return key, nil
}

// loadStoredKey reads one key; a missing key is an fs.ErrNotExist.
func loadStoredKey(ctx context.Context, storage certmagic.Storage, name string) (*waitingroom.SigningKey, error) {
	data, err := storage.Load(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("loading %s from storage: %w", name, err)
	}
	k, err := waitingroom.ParseSigningKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s in storage: %w", name, err)
	}
	return k, nil
}

// loadPreviousKeys reads the previous keys still within their retention,
// oldest retention first so that the order does not depend on the storage.
func loadPreviousKeys(ctx context.Context, storage certmagic.Storage, now time.Time) ([]*waitingroom.SigningKey, error) {
	prev, err := listPreviousKeys(ctx, storage)
	if err != nil {
		return nil, err
	}
	var keys []*waitingroom.SigningKey
	for _, p := range prev {
		if now.Before(p.dropAfter) {
			keys = append(keys, p.key)
		}
	}
	return keys, nil
}

type previousKey struct {
	name      string
	key       *waitingroom.SigningKey
	dropAfter time.Time
}

func listPreviousKeys(ctx context.Context, storage certmagic.Storage) ([]previousKey, error) {
	names, err := storage.List(ctx, previousKeysStorageDir, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing previous keys in storage: %w", err)
	}
	var out []previousKey
	for _, name := range names {
		if !strings.HasSuffix(name, ".pem") {
			continue
		}
		if !strings.HasPrefix(name, previousKeysStorageDir+"/") {
			name = path.Join(previousKeysStorageDir, name)
		}
		data, err := storage.Load(ctx, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // dropped by a promotion running now
		}
		if err != nil {
			return nil, fmt.Errorf("loading %s from storage: %w", name, err)
		}
		block, _ := pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%s in storage: no PEM block", name)
		}
		dropAfter, err := time.Parse(time.RFC3339, block.Headers[dropAfterHeader])
		if err != nil {
			return nil, fmt.Errorf("%s in storage: %s header: %w", name, dropAfterHeader, err)
		}
		k, err := waitingroom.ParseSigningKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("%s in storage: %w", name, err)
		}
		out = append(out, previousKey{name: name, key: k, dropAfter: dropAfter})
	}
	slices.SortFunc(out, func(a, b previousKey) int { return a.dropAfter.Compare(b.dropAfter) })
	return out, nil
}

// storeKey writes a key as PKCS #8 PEM, with headers (nil for none).
func storeKey(ctx context.Context, storage certmagic.Storage, name string, k *waitingroom.SigningKey, headers map[string]string) error {
	data, err := k.MarshalPEM()
	if err != nil {
		return err
	}
	if len(headers) > 0 {
		block, _ := pem.Decode(data)
		block.Headers = headers
		data = pem.EncodeToMemory(block)
	}
	return storage.Store(ctx, name, data)
}

// lockKeys takes the storage lock that guards the keys, across processes and
// nodes, and returns its release.
func lockKeys(ctx context.Context, storage certmagic.Storage) (func(), error) {
	lockCtx, cancel := context.WithTimeout(ctx, caddyLockTimeout)
	defer cancel()
	if err := storage.Lock(lockCtx, signingKeyStorageKey); err != nil {
		return nil, fmt.Errorf("locking storage: %w", err)
	}
	return func() { _ = storage.Unlock(context.Background(), signingKeyStorageKey) }, nil
}
