package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/foyer-dev/foyer/booking"
)

// PendingOutbox returns unpublished messages, oldest first.
func (s *Store) PendingOutbox(ctx context.Context, limit int) ([]booking.OutboxMessage, error) {
	return s.outboxMessages(ctx, `
		SELECT id, topic, payload, created_at FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT $1`, limit)
}

// MarkPublished flags messages as relayed.
func (s *Store) MarkPublished(ctx context.Context, ids []int64, now time.Time) error {
	_, err := s.poolFor(ctx).Exec(ctx, `UPDATE outbox SET published_at = $2 WHERE id = ANY($1) AND published_at IS NULL`, ids, now)
	return classify(err)
}

// UndeliveredOutbox returns published messages no consumer has handled.
func (s *Store) UndeliveredOutbox(ctx context.Context, publishedBefore time.Time, limit int) ([]booking.OutboxMessage, error) {
	return s.outboxMessages(ctx, `
		SELECT id, topic, payload, created_at FROM outbox
		WHERE delivered_at IS NULL AND published_at < $1 ORDER BY id LIMIT $2`, publishedBefore, limit)
}

// outboxMessages runs a query selecting id, topic, payload and created_at.
func (s *Store) outboxMessages(ctx context.Context, query string, args ...any) ([]booking.OutboxMessage, error) {
	rows, err := s.poolFor(ctx).Query(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	msgs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.OutboxMessage, error) {
		var m booking.OutboxMessage
		err := r.Scan(&m.ID, &m.Topic, &m.Payload, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return m, err
	})
	return msgs, classify(err)
}

// MarkDelivered flags messages as handled by their consumer.
func (s *Store) MarkDelivered(ctx context.Context, ids []int64, now time.Time) error {
	_, err := s.poolFor(ctx).Exec(ctx, `UPDATE outbox SET delivered_at = $2 WHERE id = ANY($1) AND delivered_at IS NULL`, ids, now)
	return classify(err)
}

// RecordDelivery keeps the first delivery of each ticket.
func (s *Store) RecordDelivery(ctx context.Context, d booking.Delivery) (bool, error) {
	tag, err := s.poolFor(ctx).Exec(ctx, `
		INSERT INTO deliveries (ticket_id, code, delivered_at) VALUES ($1, $2, $3) ON CONFLICT (ticket_id) DO NOTHING`,
		d.TicketID, d.Code, d.DeliveredAt)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign key: no such ticket
		return false, booking.Errorf(booking.KindNotFound, booking.CodeNotFound, "no ticket %q", d.TicketID)
	}
	if err != nil {
		return false, classify(err)
	}
	return tag.RowsAffected() == 1, nil
}

// RecordDeliveries keeps the first delivery of each ticket, for many
// tickets in one statement.
func (s *Store) RecordDeliveries(ctx context.Context, ds []booking.Delivery) error {
	ids := make([]string, len(ds))
	codes := make([]string, len(ds))
	ats := make([]time.Time, len(ds))
	for i, d := range ds {
		ids[i], codes[i], ats[i] = d.TicketID, d.Code, d.DeliveredAt
	}
	_, err := s.poolFor(ctx).Exec(ctx, `
		INSERT INTO deliveries (ticket_id, code, delivered_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[]) ON CONFLICT (ticket_id) DO NOTHING`,
		ids, codes, ats)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign key: no such ticket
		return booking.Errorf(booking.KindNotFound, booking.CodeNotFound, "a ticket of %d does not exist", len(ds))
	}
	return classify(err)
}
