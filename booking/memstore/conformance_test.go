package memstore_test

import (
	"testing"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/inventorytest"
	"github.com/foyer-dev/foyer/booking/memstore"
)

func TestConformance(t *testing.T) {
	inventorytest.Run(t, func(*testing.T) booking.Store { return memstore.New() })
}
