package waitingroom_test

import (
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(*testing.T) waitingroom.Store { return waitingroom.NewMemoryStore() },
		Wipe: func(_ *testing.T, s waitingroom.Store, room string) {
			s.(*waitingroom.MemoryStore).Drop(room)
		},
	})
}
