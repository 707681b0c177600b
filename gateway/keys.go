package gateway

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/caddyserver/caddy/v2"

	"github.com/foyer-dev/foyer/waitingroom"
)

// signingKeyStorageKey is where a generated key is kept in Caddy's storage. Every
// node sharing that storage (a shared file system, or a storage module backed by
// a database) signs with the same key, and a restart keeps passes valid.
const signingKeyStorageKey = "waiting_room/signing_key_ed25519.pem"

// loadSigningKey reads the key at path, or, with no path, loads the key kept in
// Caddy's storage, generating and storing one the first time.
func loadSigningKey(ctx caddy.Context, path string) (*waitingroom.SigningKey, error) {
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return waitingroom.ParseSigningKeyPEM(data)
	}
	storage := ctx.Storage()
	if storage == nil {
		return nil, errors.New("no signing_key given and no Caddy storage to keep a generated one")
	}
	if data, err := storage.Load(ctx, signingKeyStorageKey); err == nil {
		return waitingroom.ParseSigningKeyPEM(data)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("loading from storage: %w", err)
	}
	// Two nodes starting at once on shared storage must not each make their own.
	lockCtx, cancel := context.WithTimeout(ctx, caddyLockTimeout)
	defer cancel()
	if err := storage.Lock(lockCtx, signingKeyStorageKey); err != nil {
		return nil, fmt.Errorf("locking storage: %w", err)
	}
	defer func() { _ = storage.Unlock(context.Background(), signingKeyStorageKey) }()
	if data, err := storage.Load(ctx, signingKeyStorageKey); err == nil {
		return waitingroom.ParseSigningKeyPEM(data)
	}
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		return nil, err
	}
	pemData, err := key.MarshalPEM()
	if err != nil {
		return nil, err
	}
	if err := storage.Store(ctx, signingKeyStorageKey, pemData); err != nil {
		return nil, fmt.Errorf("storing generated key: %w", err)
	}
	return key, nil
}
