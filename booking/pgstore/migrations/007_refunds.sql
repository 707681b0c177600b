-- A paid order can be refunded: its tickets are cancelled, not deleted (a
-- ticket's code may be in a fan's hands; the row says it no longer admits),
-- and its places go back on sale. A seat may so have several tickets over
-- time, but at most one live one: the unique index on live tickets replaces
-- the unique constraint on all of them as the last line of defence against
-- selling a seat twice.
ALTER TABLE tickets ADD COLUMN cancelled_at timestamptz;
ALTER TABLE tickets DROP CONSTRAINT tickets_event_id_seat_id_key;
CREATE UNIQUE INDEX tickets_live_seat ON tickets (event_id, seat_id) WHERE cancelled_at IS NULL AND seat_id IS NOT NULL;

-- Why and when an order was refunded. Orders refunded before this migration
-- were all refunded because their places were lost.
ALTER TABLE orders ADD COLUMN refund_reason text CHECK (refund_reason IN ('returned', 'places_lost'));
ALTER TABLE orders ADD COLUMN refunded_at timestamptz;
UPDATE orders SET refund_reason = 'places_lost' WHERE status = 'refunded';
ALTER TABLE orders ADD CONSTRAINT orders_refund_reason CHECK ((status = 'refunded') = (refund_reason IS NOT NULL));
