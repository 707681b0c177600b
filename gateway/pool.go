package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

const (
	caddyLockTimeout = 30 * time.Second
	roomStartTimeout = 3 * time.Second
)

// clockOverride replaces the gateway's clock in tests, which drive rooms through
// time without sleeping. Rooms of a running Caddy read it concurrently.
var clockOverride atomic.Pointer[func() time.Time]

// now is the gateway's clock.
func now() time.Time {
	if f := clockOverride.Load(); f != nil {
		return (*f)()
	}
	return time.Now()
}

// rooms holds the live rooms of this process. A room (its view, its pass cache,
// its controller loop) outlives config reloads as long as its identity and
// settings are unchanged; the memory store outlives them as long as any room
// uses it, so a reload never empties a queue.
var (
	rooms  = caddy.NewUsagePool()
	stores = caddy.NewUsagePool()
)

type roomHandle struct {
	room     *waitingroom.Room
	storeKey string
	cancel   context.CancelFunc
	done     chan struct{}
	memo     *memoWriter
	fairness fairnessCache
	live     liveConns
	// logger is the logger of the latest configuration that uses the room,
	// for the lines watchRoom writes over the room's life.
	logger atomic.Pointer[zap.Logger]
	// events is the events app of that configuration (events.go).
	events sinkPointer
	// handler is that configuration's handler of the room, whose page and
	// languages the dashboard's previews render with (preview.go).
	handler atomic.Pointer[Handler]
}

// handlerOf is the latest configuration's handler of a live room, nil when
// none serves it. Like liveRooms, it only collects a pointer while the pool
// is locked.
func handlerOf(room *waitingroom.Room) *Handler {
	var h *Handler
	rooms.Range(func(_, v any) bool {
		if rh, ok := v.(*roomHandle); ok && rh.room == room {
			h = rh.handler.Load()
			return false
		}
		return true
	})
	return h
}

// Destruct stops the room's controller and lets go of its store.
func (rh *roomHandle) Destruct() error {
	rh.cancel()
	<-rh.done
	rh.memo.wait()
	_, err := stores.Delete(rh.storeKey)
	return err
}

type storeHandle struct {
	store waitingroom.Store
	close func() error
}

func (sh *storeHandle) Destruct() error {
	if sh.close == nil {
		return nil
	}
	return sh.close()
}

// roomIdentity is what makes two handlers share one room in this process: the
// same room on the same store with the same keys and settings. Every key counts,
// not only the signing one: a reload that drops a previous key must stop
// honouring what it signed.
func roomIdentity(h *Handler, storeKey string) string {
	kids := []string{h.key.KeyID()}
	for _, k := range h.previous {
		kids = append(kids, k.KeyID())
	}
	b, _ := json.Marshal(struct {
		Store    string
		Room     string
		Kid      []string
		Issuer   string
		Settings waitingroom.Settings
		Open     bool
	}{storeKey, h.Room, kids, h.Issuer, h.settings, h.OnStoreFailure == storeFailureOpen})
	sum := sha256.Sum256(b)
	return "room:" + h.Room + ":" + hex.EncodeToString(sum[:8])
}

func storeIdentity(sc *StoreConfig) string {
	if sc == nil || sc.Backend == "" || sc.Backend == "memory" {
		return "memory"
	}
	return sc.Backend + " " + sc.URL
}

func acquireStore(key string, sc *StoreConfig) (waitingroom.Store, error) {
	v, _, err := stores.LoadOrNew(key, func() (caddy.Destructor, error) {
		if sc == nil || sc.Backend != "redis" {
			return &storeHandle{store: memstore.New()}, nil
		}
		client, err := redisstore.NewClient(sc.URL)
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		st, err := redisstore.New(client)
		if err != nil {
			_ = client.Close()
			return nil, fmt.Errorf("store: %w", err)
		}
		// Caching the scripts up front saves the first operations a round
		// trip; a Redis that is down now is handled like one that goes down
		// later, so this is best effort.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = st.LoadScripts(ctx)
		cancel()
		return &storeHandle{store: st, close: client.Close}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*storeHandle).store, nil
}

// acquireRoom finds or starts the room for h.
func acquireRoom(ctx caddy.Context, h *Handler, logger *zap.Logger) (*roomHandle, string, error) {
	storeKey := storeIdentity(h.Store)
	key := roomIdentity(h, storeKey)
	v, _, err := rooms.LoadOrNew(key, func() (caddy.Destructor, error) {
		store, err := acquireStore(storeKey, h.Store)
		if err != nil {
			return nil, err
		}
		memo, resumed := loadRoomMemo(ctx, storeKey, h.Room, h.settings.WithDefaults().TicketLifetime)
		writer := newMemoWriter(ctx, storeKey, h.Room)
		room, err := waitingroom.NewRoom(waitingroom.Config{
			ID:       h.Room,
			Settings: h.settings,
			Store:    store,
			Key:      h.key,
			Previous: h.previous,
			Issuer:   h.Issuer,
			Now:      now,
			Resumed:  resumed,
			Memo:     memo,
			Remember: writer.rememberFunc(),

			OpenOnStoreFailure: h.OnStoreFailure == storeFailureOpen,
		})
		if err != nil {
			_, _ = stores.Delete(storeKey)
			return nil, err
		}
		// The room runs on its own context: it must outlive the config that
		// created it when a reload keeps it, and stop when the pool drops it.
		runCtx, cancel := context.WithCancel(context.Background())
		// A store that does not answer must not hold up Caddy's start (or every
		// admin call and scrape waiting on this pool entry): the room starts
		// in its failure mode and its loop keeps trying.
		startCtx, cancelStart := context.WithTimeout(runCtx, roomStartTimeout)
		err = room.Start(startCtx)
		cancelStart()
		if err != nil {
			// Not fatal: the room serves in its failure mode and recovers
			// when the store answers.
			logger.Warn("waiting room store unreachable at start", zap.String("room", h.Room), zap.Error(err))
		}
		rh := &roomHandle{room: room, storeKey: storeKey, cancel: cancel, done: make(chan struct{}), memo: writer}
		rh.logger.Store(logger)
		var wg sync.WaitGroup
		wg.Go(func() { room.Run(runCtx) })
		wg.Go(func() { watchRoom(runCtx, room, rh.logger.Load, rh.events.Load) })
		go func() {
			wg.Wait()
			close(rh.done)
		}()
		return rh, nil
	})
	if err != nil {
		return nil, "", err
	}
	rh := v.(*roomHandle)
	rh.logger.Store(logger)
	return rh, key, nil
}
