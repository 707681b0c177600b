package gateway

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/foyer-dev/foyer/waitingroom"
)

// stageStoredKey generates the next key and keeps it in storage, where nodes
// find it when they next load their configuration: they publish it and accept
// what it signs, but do not sign with it yet. Staging again while a key is
// staged keeps that key, so a repeated command is harmless.
func stageStoredKey(ctx context.Context, storage certmagic.Storage) (string, error) {
	unlock, err := lockKeys(ctx, storage)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := loadStoredKey(ctx, storage, signingKeyStorageKey); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", errors.New("no signing key in this storage yet: a node makes one when it first starts with a waiting room")
		}
		return "", err
	}
	if next, err := loadStoredKey(ctx, storage, nextKeyStorageKey); err == nil {
		return next.KeyID(), nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	next, err := waitingroom.GenerateSigningKey()
	if err != nil {
		return "", err
	}
	if err := storeKey(ctx, storage, nextKeyStorageKey, next, nil); err != nil {
		return "", fmt.Errorf("storing the next key: %w", err)
	}
	return next.KeyID(), nil
}

// promoteStoredKey makes the staged key the current one and keeps the old
// current key as a previous key until now+retain. Previous keys already past
// their retention are deleted. The writes are ordered so that a crash between
// any two leaves every key that signed anything still trusted: the old key is
// saved as previous before the new one replaces it, and the staged copy is
// removed last.
func promoteStoredKey(ctx context.Context, storage certmagic.Storage, retain time.Duration, now time.Time) (oldKID, newKID string, err error) {
	if retain <= 0 {
		return "", "", errors.New("the retention of the previous key must be positive")
	}
	unlock, err := lockKeys(ctx, storage)
	if err != nil {
		return "", "", err
	}
	defer unlock()
	next, err := loadStoredKey(ctx, storage, nextKeyStorageKey)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", errors.New("no staged key: stage one and reload every node first, so that every node trusts it before any signs with it")
	}
	if err != nil {
		return "", "", err
	}
	current, err := loadStoredKey(ctx, storage, signingKeyStorageKey)
	if err != nil {
		return "", "", fmt.Errorf("current key: %w", err)
	}
	if current.KeyID() != next.KeyID() {
		name := previousKeysStorageDir + "/" + current.KeyID() + ".pem"
		headers := map[string]string{dropAfterHeader: now.Add(retain).UTC().Format(time.RFC3339)}
		if err := storeKey(ctx, storage, name, current, headers); err != nil {
			return "", "", fmt.Errorf("keeping the previous key: %w", err)
		}
		if err := storeKey(ctx, storage, signingKeyStorageKey, next, nil); err != nil {
			return "", "", fmt.Errorf("storing the new current key: %w", err)
		}
	}
	if err := storage.Delete(ctx, nextKeyStorageKey); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("removing the staged copy: %w", err)
	}
	if err := dropExpiredKeys(ctx, storage, now); err != nil {
		return "", "", err
	}
	return current.KeyID(), next.KeyID(), nil
}

// dropExpiredKeys deletes the previous keys past their retention. Nodes ignore
// them anyway; this keeps the storage tidy.
func dropExpiredKeys(ctx context.Context, storage certmagic.Storage, now time.Time) error {
	prev, err := listPreviousKeys(ctx, storage)
	if err != nil {
		return err
	}
	for _, p := range prev {
		if now.Before(p.dropAfter) {
			continue
		}
		if err := storage.Delete(ctx, p.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("dropping %s: %w", p.name, err)
		}
	}
	return nil
}
