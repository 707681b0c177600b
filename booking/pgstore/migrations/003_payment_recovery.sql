-- The outbox learns which messages were handled, so a stream that lost its
-- data (Redis restarted empty) is given the undelivered ones again. Rows
-- published before this migration count as undelivered: handling them again
-- is harmless, as ticket delivery is idempotent.
ALTER TABLE outbox ADD COLUMN delivered_at timestamptz;
CREATE INDEX outbox_undelivered ON outbox (id) WHERE delivered_at IS NULL AND published_at IS NOT NULL;

-- The reconciler looks for orders still waiting for their payment.
CREATE INDEX orders_pending_payment ON orders (created_at) WHERE status = 'pending_payment';
