package payments

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// memoryLedger is a Ledger in process memory.
type memoryLedger struct {
	mu          sync.Mutex
	payments    map[string]Payment
	idempotency map[string]Record
	queue       map[string]*Delivery
	seq         int64
}

// NewMemoryLedger returns an empty ledger that lives as long as the process.
func NewMemoryLedger() Ledger {
	return &memoryLedger{payments: map[string]Payment{}, idempotency: map[string]Record{}, queue: map[string]*Delivery{}}
}

// memTx stages writes so that an Update that fails leaves nothing behind.
type memTx struct {
	l           *memoryLedger
	payments    map[string]Payment
	idempotency map[string]Record
	queue       []Delivery
}

func (l *memoryLedger) Update(_ context.Context, fn func(LedgerTx) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	tx := &memTx{l: l, payments: map[string]Payment{}, idempotency: map[string]Record{}}
	if err := fn(tx); err != nil {
		return err
	}
	maps.Copy(l.payments, tx.payments)
	maps.Copy(l.idempotency, tx.idempotency)
	for _, d := range tx.queue {
		l.seq++
		d.Seq = l.seq
		l.queue[d.ID] = &d
	}
	return nil
}

func (tx *memTx) Idempotent(key string) (Record, bool, error) {
	if r, ok := tx.idempotency[key]; ok {
		return r, true, nil
	}
	r, ok := tx.l.idempotency[key]
	return r, ok, nil
}

func (tx *memTx) SaveIdempotent(key string, r Record) error {
	tx.idempotency[key] = cloneRecord(r)
	return nil
}

func (tx *memTx) Payment(id string) (Payment, bool, error) {
	if p, ok := tx.payments[id]; ok {
		return clonePayment(p), true, nil
	}
	p, ok := tx.l.payments[id]
	return clonePayment(p), ok, nil
}

func (tx *memTx) SavePayment(p Payment) error {
	tx.payments[p.ID] = clonePayment(p)
	return nil
}

func (tx *memTx) Enqueue(d Delivery) error {
	tx.queue = append(tx.queue, d)
	return nil
}

func (l *memoryLedger) Payment(_ context.Context, id string) (Payment, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.payments[id]
	return clonePayment(p), ok, nil
}

func (l *memoryLedger) Claim(_ context.Context, now time.Time, lease time.Duration, limit int) ([]Delivery, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var due []*Delivery
	for _, d := range l.queue {
		if !now.Before(d.Due) {
			due = append(due, d)
		}
	}
	slices.SortFunc(due, func(a, b *Delivery) int { return int(a.Seq - b.Seq) })
	out := make([]Delivery, 0, min(len(due), limit))
	for _, d := range due[:min(len(due), limit)] {
		out = append(out, *d)
		d.Due = now.Add(lease)
	}
	return out, nil
}

func (l *memoryLedger) Acknowledge(_ context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.queue, id)
	return nil
}

func (l *memoryLedger) Reschedule(_ context.Context, id string, due time.Time, attempts int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d, ok := l.queue[id]; ok {
		d.Due, d.Attempts = due, attempts
	}
	return nil
}

func (l *memoryLedger) Pending(context.Context) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue), nil
}

func cloneRecord(r Record) Record {
	r.Payment = clonePayment(r.Payment)
	return r
}
