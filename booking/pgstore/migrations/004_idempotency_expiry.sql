-- Replays repeat the headers that matter (Location, the gateway command), and
-- records past their 24 h lifetime are pruned in batches, oldest first.
ALTER TABLE idempotency_keys ADD COLUMN headers jsonb;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
