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

// retiredKey is a previous key that a rotation deleted from storage: past its
// retention, or before it (early) because the operator asked for room.
type retiredKey struct {
	kid       string
	dropAfter time.Time
	early     bool
}

// stageStoredKey generates the next key and keeps it in storage, where nodes
// find it when they next load their configuration: they publish it and accept
// what it signs, but do not sign with it yet. Staging again while a key is
// staged keeps that key, so a repeated command is harmless.
//
// A node verifies with at most waitingroom.MaxVerifyingKeys keys besides the
// signing one, and the staged key is one of them: previous keys past their
// retention are retired first, and if those within it still leave no room,
// staging is refused, before anything is written, unless retireEarly lets
// it retire the oldest of them (see makeRoom).
func stageStoredKey(ctx context.Context, storage certmagic.Storage, now time.Time, retireEarly bool) (string, []retiredKey, error) {
	unlock, err := lockKeys(ctx, storage)
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	if _, err := loadStoredKey(ctx, storage, signingKeyStorageKey); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, errors.New("no signing key in this storage yet: a node makes one when it first starts with a waiting room")
		}
		return "", nil, err
	}
	if next, err := loadStoredKey(ctx, storage, nextKeyStorageKey); err == nil {
		return next.KeyID(), nil, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	retired, err := makeRoom(ctx, storage, now, retireEarly)
	if err != nil {
		return "", retired, err
	}
	next, err := waitingroom.GenerateSigningKey()
	if err != nil {
		return "", retired, err
	}
	if err := storeKey(ctx, storage, nextKeyStorageKey, next, nil); err != nil {
		return "", retired, fmt.Errorf("storing the next key: %w", err)
	}
	return next.KeyID(), retired, nil
}

// promoteStoredKey makes the staged key the current one and keeps the old
// current key as a previous key until now+retain. Previous keys already past
// their retention are deleted, and the count of verifying keys is kept within
// the bound as in stageStoredKey: the old current key takes the place the
// staged one had, so after a stage this never needs an early retirement. The
// writes are ordered so that a crash between any two leaves every key that
// signed anything still trusted: the old key is saved as previous before the
// new one replaces it, and the staged copy is removed last.
func promoteStoredKey(ctx context.Context, storage certmagic.Storage, retain time.Duration, now time.Time, retireEarly bool) (oldKID, newKID string, retired []retiredKey, err error) {
	if retain <= 0 {
		return "", "", nil, errors.New("the retention of the previous key must be positive")
	}
	unlock, err := lockKeys(ctx, storage)
	if err != nil {
		return "", "", nil, err
	}
	defer unlock()
	next, err := loadStoredKey(ctx, storage, nextKeyStorageKey)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", nil, errors.New("no staged key: stage one and reload every node first, so that every node trusts it before any signs with it")
	}
	if err != nil {
		return "", "", nil, err
	}
	current, err := loadStoredKey(ctx, storage, signingKeyStorageKey)
	if err != nil {
		return "", "", nil, fmt.Errorf("current key: %w", err)
	}
	if current.KeyID() != next.KeyID() {
		if retired, err = makeRoom(ctx, storage, now, retireEarly); err != nil {
			return "", "", retired, err
		}
		name := previousKeysStorageDir + "/" + current.KeyID() + ".pem"
		headers := map[string]string{dropAfterHeader: now.Add(retain).UTC().Format(time.RFC3339)}
		if err := storeKey(ctx, storage, name, current, headers); err != nil {
			return "", "", retired, fmt.Errorf("keeping the previous key: %w", err)
		}
		if err := storeKey(ctx, storage, signingKeyStorageKey, next, nil); err != nil {
			return "", "", retired, fmt.Errorf("storing the new current key: %w", err)
		}
	}
	if err := storage.Delete(ctx, nextKeyStorageKey); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", retired, fmt.Errorf("removing the staged copy: %w", err)
	}
	return current.KeyID(), next.KeyID(), retired, nil
}

// makeRoom deletes the previous keys that must go for one more verifying key
// (the staged key, or the current key becoming a previous one) to fit within
// waitingroom.MaxVerifyingKeys: every key past its retention, which nodes
// ignore already, and then, only with early, the oldest keys still within
// it. Without early it refuses, before deleting anything, when that is not
// enough: a node that loaded one key too many would not start.
func makeRoom(ctx context.Context, storage certmagic.Storage, now time.Time, early bool) ([]retiredKey, error) {
	prev, err := listPreviousKeys(ctx, storage)
	if err != nil {
		return nil, err
	}
	var expired, live []previousKey
	for _, p := range prev { // oldest retention first
		if now.Before(p.dropAfter) {
			live = append(live, p)
		} else {
			expired = append(expired, p)
		}
	}
	excess := len(live) + 1 - waitingroom.MaxVerifyingKeys
	if excess > 0 && !early {
		oldest := live[0]
		return nil, fmt.Errorf("%d previous keys still verify, the oldest (%s) until %s: one more key would leave every node that shares this storage unable to start "+
			"(a node verifies with at most %d keys besides the one that signs). Nothing was changed. "+
			"Run this again after %s, or with --retire-early to stop trusting %s now (tickets and passes only it signed are then refused)",
			len(live), oldest.key.KeyID(), oldest.dropAfter.UTC().Format(time.RFC3339), waitingroom.MaxVerifyingKeys,
			oldest.dropAfter.UTC().Format(time.RFC3339), oldest.key.KeyID())
	}
	var retired []retiredKey
	drop := func(p previousKey, early bool) error {
		if err := storage.Delete(ctx, p.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("retiring %s: %w", p.name, err)
		}
		retired = append(retired, retiredKey{kid: p.key.KeyID(), dropAfter: p.dropAfter, early: early})
		return nil
	}
	for _, p := range expired {
		if err := drop(p, false); err != nil {
			return retired, err
		}
	}
	for _, p := range live[:max(excess, 0)] {
		if err := drop(p, true); err != nil {
			return retired, err
		}
	}
	return retired, nil
}
