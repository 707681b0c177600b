package pgstore_test

import (
	"context"
	"testing"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/inventorytest"
	"github.com/foyer-dev/foyer/booking/pgstore"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
)

func TestConformance(t *testing.T) {
	inventorytest.Run(t, func(t *testing.T) booking.Store { return open(t, pgstore.Options{}) })
}

func open(t *testing.T, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), pgtest.NewDatabase(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func newDatabase(tb testing.TB) string { return pgtest.NewDatabase(tb) }
