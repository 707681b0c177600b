package memstore_test

import (
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(*testing.T) waitingroom.Store { return memstore.New() },
		Wipe: func(_ *testing.T, s waitingroom.Store, room string) {
			s.(*memstore.Store).Drop(room)
		},
	})
}
