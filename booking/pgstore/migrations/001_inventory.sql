-- The booking inventory. Seat status lives on the seat row; a hold is one
-- conditional UPDATE over seats; tickets carry UNIQUE (event_id, seat_id) as
-- the last line of defence against selling a seat twice.
--
-- Tables written on every hold or sale (holds, customer_quotas, orders,
-- tickets) have no foreign key to events on purpose: each such key check
-- share-locks the one event row, and thousands of concurrent shoppers of one
-- event would pile those locks into multixacts on a single row. The store
-- checks the event exists (events never change) before it writes.

CREATE TABLE events (
    id          bigserial PRIMARY KEY,
    name        text        NOT NULL,
    starts_at   timestamptz NOT NULL,
    currency    char(3)     NOT NULL,
    created_at  timestamptz NOT NULL
);

CREATE TABLE sections (
    event_id      bigint  NOT NULL REFERENCES events (id),
    id            text    NOT NULL,
    position      int     NOT NULL,
    rows          int     NOT NULL CHECK (rows > 0),
    seats_per_row int     NOT NULL CHECK (seats_per_row > 0),
    price_cents   bigint  NOT NULL CHECK (price_cents >= 0),
    PRIMARY KEY (event_id, id)
);

CREATE TABLE zones (
    event_id    bigint NOT NULL REFERENCES events (id),
    id          text   NOT NULL,
    position    int    NOT NULL,
    capacity    int    NOT NULL CHECK (capacity > 0),
    price_cents bigint NOT NULL CHECK (price_cents >= 0),
    PRIMARY KEY (event_id, id)
);

-- A zone's places are counted on several rows so that concurrent buyers of one
-- zone update different rows instead of queueing on one.
CREATE TABLE zone_shards (
    event_id  bigint NOT NULL,
    zone_id   text   NOT NULL,
    shard     int    NOT NULL,
    capacity  int    NOT NULL,
    held      int    NOT NULL DEFAULT 0,
    sold      int    NOT NULL DEFAULT 0,
    PRIMARY KEY (event_id, zone_id, shard),
    FOREIGN KEY (event_id, zone_id) REFERENCES zones (event_id, id),
    CHECK (held >= 0 AND sold >= 0 AND held + sold <= capacity)
);

CREATE TABLE holds (
    id           text        PRIMARY KEY,
    event_id     bigint      NOT NULL,
    customer_id  text        NOT NULL,
    zone_id      text,
    quantity     int         NOT NULL CHECK (quantity > 0),
    amount_cents bigint      NOT NULL,
    status       text        NOT NULL CHECK (status IN ('active', 'released', 'expired', 'ordered')),
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX holds_expiry ON holds (expires_at) WHERE status = 'active';
CREATE INDEX holds_customer ON holds (event_id, customer_id) WHERE status = 'active';
CREATE INDEX holds_zone ON holds (event_id, zone_id, expires_at) WHERE status = 'active' AND zone_id IS NOT NULL;

-- The seats a hold asked for, kept after the hold ends so a late payment can
-- try to take the same seats again.
CREATE TABLE hold_seats (
    hold_id  text   NOT NULL REFERENCES holds (id),
    event_id bigint NOT NULL,
    seat_id  text   NOT NULL,
    PRIMARY KEY (hold_id, seat_id)
);

CREATE TABLE zone_allocations (
    hold_id  text   NOT NULL REFERENCES holds (id),
    event_id bigint NOT NULL,
    zone_id  text   NOT NULL,
    shard    int    NOT NULL,
    quantity int    NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (hold_id, shard)
);

CREATE TABLE seats (
    event_id   bigint NOT NULL REFERENCES events (id),
    id         text   NOT NULL,
    section_id text   NOT NULL,
    row_no     int    NOT NULL,
    seat_no    int    NOT NULL,
    status     text   NOT NULL DEFAULT 'AVAILABLE' CHECK (status IN ('AVAILABLE', 'HELD', 'SOLD')),
    hold_id    text,
    held_until timestamptz,
    order_id   text,
    PRIMARY KEY (event_id, id),
    CHECK ((status = 'HELD') = (hold_id IS NOT NULL AND held_until IS NOT NULL)),
    CHECK ((status = 'SOLD') = (order_id IS NOT NULL))
);
-- Best available walks this index. Only free seats are in it, so a shopper
-- never steps over the seats already taken; expired holds are found by a
-- slower scan only when the fast one comes up short.
CREATE INDEX seats_available ON seats (event_id, section_id, row_no, seat_no) WHERE status = 'AVAILABLE';
CREATE INDEX seats_held ON seats (event_id, section_id, held_until) WHERE status = 'HELD';
CREATE INDEX seats_hold ON seats (hold_id) WHERE hold_id IS NOT NULL;

-- Seats a customer holds or has bought for an event, capped in the same
-- transaction as every hold.
CREATE TABLE customer_quotas (
    event_id    bigint NOT NULL,
    customer_id text   NOT NULL,
    seats       int    NOT NULL CHECK (seats >= 0),
    PRIMARY KEY (event_id, customer_id)
);

CREATE TABLE orders (
    id           text        PRIMARY KEY,
    hold_id      text        NOT NULL UNIQUE REFERENCES holds (id),
    event_id     bigint      NOT NULL,
    customer_id  text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('pending_payment', 'paid', 'refund_pending', 'refunded', 'payment_failed')),
    amount_cents bigint      NOT NULL,
    currency     char(3)     NOT NULL,
    created_at   timestamptz NOT NULL,
    paid_at      timestamptz
);
CREATE INDEX orders_refund_pending ON orders (id) WHERE status = 'refund_pending';

CREATE TABLE payments (
    id                  text   PRIMARY KEY,
    order_id            text   NOT NULL UNIQUE REFERENCES orders (id),
    provider_payment_id text   UNIQUE,
    status              text   NOT NULL CHECK (status IN ('pending', 'succeeded', 'refunded', 'failed')),
    amount_cents        bigint NOT NULL,
    pay_url             text,
    idempotency_key     text   NOT NULL UNIQUE,
    refund_key          text   NOT NULL UNIQUE
);

-- Every webhook event is applied once: its provider id is the key.
CREATE TABLE provider_events (
    id          text        PRIMARY KEY,
    order_id    text        NOT NULL REFERENCES orders (id),
    received_at timestamptz NOT NULL
);

CREATE TABLE tickets (
    id       text   PRIMARY KEY,
    order_id text   NOT NULL REFERENCES orders (id),
    event_id bigint NOT NULL,
    seat_id  text,
    zone_id  text,
    CHECK ((seat_id IS NULL) <> (zone_id IS NULL)),
    UNIQUE (event_id, seat_id)
);
CREATE INDEX tickets_order ON tickets (order_id);

CREATE TABLE outbox (
    id           bigserial   PRIMARY KEY,
    topic        text        NOT NULL,
    payload      jsonb       NOT NULL,
    created_at   timestamptz NOT NULL,
    published_at timestamptz
);
CREATE INDEX outbox_pending ON outbox (id) WHERE published_at IS NULL;

CREATE TABLE deliveries (
    ticket_id    text        PRIMARY KEY REFERENCES tickets (id),
    code         text        NOT NULL,
    delivered_at timestamptz NOT NULL
);

CREATE TABLE idempotency_keys (
    scope       text        NOT NULL,
    key         text        NOT NULL,
    fingerprint text        NOT NULL,
    created_at  timestamptz NOT NULL,
    status_code int,
    body        bytea,
    PRIMARY KEY (scope, key)
);
