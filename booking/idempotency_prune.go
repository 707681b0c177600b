package booking

import (
	"context"
	"time"
)

// pruneBatch bounds one prune statement, so a backlog after a long outage is
// worked off in short transactions rather than one long lock.
const pruneBatch = 1000

// PruneIdempotency deletes idempotency records older than IdempotencyKeyTTL
// and reports how many went. Keys are replayed for that long only, so a
// pruned record would never have been replayed again.
func (s *Service) PruneIdempotency(ctx context.Context) (int, error) {
	cutoff := s.cfg.Clock.Now().Add(-IdempotencyKeyTTL)
	total := 0
	for {
		n, err := s.cfg.Store.PruneIdempotency(ctx, cutoff, pruneBatch)
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
}

// RunIdempotencyPruner prunes every interval until ctx ends. Every process
// of a shared database may run it: a record is deleted once, whoever wins.
// Its deletes are background work (Background).
func (s *Service) RunIdempotencyPruner(ctx context.Context, interval time.Duration) {
	ctx = Background(ctx)
	every(ctx, interval, func() {
		if n, err := s.PruneIdempotency(ctx); err != nil {
			s.cfg.Logger.Warn("idempotency pruner", "error", err)
		} else if n > 0 {
			s.cfg.Logger.Info("expired idempotency keys pruned", "keys", n)
		}
	})
}
