package stream

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Stream on a Redis Stream. It takes a redis.UniversalClient so one
// code path serves a single node, Sentinel and Cluster.
type Redis struct {
	client redis.UniversalClient
	key    string // the stream
	prefix string // dedup markers live under prefix + "seen:"
	// SeenTTL is how long an outbox id is remembered for deduplication: far
	// longer than any relay could take to retry.
	SeenTTL time.Duration
	// Block is how long one read waits for new messages.
	Block time.Duration
	// RetryAfter is how long a message may stay unacknowledged before
	// another consumer (or the same one) takes it over.
	RetryAfter time.Duration
}

var _ Stream = (*Redis)(nil)

// DefaultPrefix keeps every key in one hash slot ({booking}) so the
// publish script's keys may be used together on a Redis Cluster.
const DefaultPrefix = "foyer:{booking}:outbox:"

// NewRedis returns a stream stored under prefix (DefaultPrefix when empty).
// A prefix must contain a hash tag, in braces, when the server is a Cluster.
func NewRedis(client redis.UniversalClient, prefix string) *Redis {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Redis{client: client, key: prefix + "stream", prefix: prefix, SeenTTL: 7 * 24 * time.Hour, Block: time.Second, RetryAfter: DefaultRetryAfter}
}

// publishScript appends a message only if its outbox id was never seen, in one
// atomic step: a marker key and the XADD, or nothing.
var publishScript = redis.NewScript(`
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[1]) then
  return redis.call('XADD', KEYS[1], '*', 'outbox_id', ARGV[2], 'topic', ARGV[3], 'payload', ARGV[4])
end
return false
`)

// Publish appends m once per outbox id.
func (s *Redis) Publish(ctx context.Context, m Message) (bool, error) {
	id := strconv.FormatInt(m.ID, 10)
	res, err := publishScript.Run(ctx, s.client, []string{s.key, s.prefix + "seen:" + id},
		int(s.SeenTTL/time.Second), id, m.Topic, m.Payload).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return res != nil, nil
}

// Consume reads as consumer in group: first messages that another consumer
// claimed and never acknowledged within s.RetryAfter, then new ones.
func (s *Redis) Consume(ctx context.Context, group, consumer string, handle Handler) error {
	if err := s.createGroup(ctx, group); err != nil {
		return err
	}
	for ctx.Err() == nil {
		msgs, _, err := s.client.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: s.key, Group: group, Consumer: consumer, MinIdle: s.RetryAfter, Start: "0", Count: 50,
		}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			if !s.recover(ctx, group, err) {
				break
			}
			continue
		}
		if len(msgs) == 0 {
			streams, err := s.client.XReadGroup(ctx, &redis.XReadGroupArgs{
				Group: group, Consumer: consumer, Streams: []string{s.key, ">"}, Count: 50, Block: s.Block,
			}).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				if !s.recover(ctx, group, err) {
					break
				}
				continue
			}
			for _, st := range streams {
				msgs = append(msgs, st.Messages...)
			}
		}
		for _, xm := range msgs {
			m, ok := decode(xm)
			if ok {
				if err := handle(ctx, m); err != nil {
					continue // stays pending; XAUTOCLAIM hands it out again
				}
			}
			// Malformed entries are acknowledged: retrying cannot fix them.
			s.client.XAck(ctx, s.key, group, xm.ID)
		}
	}
	return ctx.Err()
}

// createGroup makes the group, and the stream with it, reading from the
// start: whatever was published before the group existed is delivered too.
func (s *Redis) createGroup(ctx context.Context, group string) error {
	err := s.client.XGroupCreateMkStream(ctx, s.key, group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return err
	}
	return nil
}

// recover handles a failed read. A Redis that restarted empty answers
// NOGROUP: the group (and the stream) are made again at once, or delivery
// would stop for good. Anything else is waited out. It reports false when ctx
// ended.
func (s *Redis) recover(ctx context.Context, group string, err error) bool {
	if strings.HasPrefix(err.Error(), "NOGROUP") {
		if s.createGroup(ctx, group) == nil {
			return ctx.Err() == nil
		}
	}
	return sleep(ctx, time.Second)
}

func decode(xm redis.XMessage) (Message, bool) {
	idStr, _ := xm.Values["outbox_id"].(string)
	topic, _ := xm.Values["topic"].(string)
	payload, _ := xm.Values["payload"].(string)
	id, err := strconv.ParseInt(idStr, 10, 64)
	if err != nil || topic == "" {
		return Message{}, false
	}
	return Message{ID: id, Topic: topic, Payload: []byte(payload)}, true
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
