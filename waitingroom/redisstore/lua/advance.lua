-- Advance: one step of the admission controller. Every node calls it every
-- second; the tick recorded in the room makes all but the first call in a
-- given second a no-op, so no node has to be the leader.
-- ARGV: now (µs), tick (unix s), open (0/1), close draw (0/1), rate (per
-- minute), cap, grace (µs), returner window (µs), max catch-up ticks, ttl (ms),
-- reshuffle (0/1), return window (µs)
-- Returns 1 when it stepped, 0 when this second was already stepped, nil when
-- the room is unknown.
local last = redis.call('HGET', meta, 'tick')
if not last then
	return false
end
local now, tick = tonumber(ARGV[1]), tonumber(ARGV[2])
last = tonumber(last)
if tick <= last then
	return 0
end
local elapsed = tick - last
if last == 0 or elapsed > tonumber(ARGV[9]) then
	elapsed = 1 -- a stalled controller does not release a burst
end
redis.call('HSET', meta, 'tick', int(tick))

-- A room whose controller runs is alive: keep all its keys, once this step
-- has written them. One that nobody steps any more vanishes after the ttl.
local function keep_alive()
	for _, k in ipairs(KEYS) do
		redis.call('PEXPIRE', k, ARGV[10])
	end
	return 1
end

expire_sessions(now)
redis.call('ZREMRANGEBYSCORE', finished, '-inf', int(now))
local gone = redis.call('ZRANGEBYSCORE', revokedexp, '-inf', int(now))
for _, m in ipairs(gone) do
	redis.call('ZREM', revoked, m)
end
redis.call('ZREMRANGEBYSCORE', revokedexp, '-inf', int(now))
redis.call('ZREMRANGEBYSCORE', returners, '-inf', int(now - tonumber(ARGV[8])))

-- Batches are in admission order, so the lapsed ones are at the head.
local grace = tonumber(ARGV[7])
local pending, abandoned = num(redis.call('HGET', meta, 'pending')), 0
while true do
	local head = redis.call('ZRANGE', batches, 0, 0)
	if #head == 0 then
		break
	end
	local start, count, claimed, at, restored = parse_batch(head[1])
	if now < at + grace then
		break
	end
	if not restored then
		pending = pending - (count - claimed)
	end
	abandoned = abandoned + (count - claimed)
	redis.call('ZREM', batches, head[1])
	if count > claimed then
		redis.call('ZADD', lapsed, int(start), lapse(start, count, at + grace))
	end
end
-- Lapsed admissions whose return window has passed: their holders rejoin at
-- the back, so the record goes.
local window = tonumber(ARGV[12])
while true do
	local head = redis.call('ZRANGE', lapsed, 0, 0)
	if #head == 0 then
		break
	end
	local _, _, at = parse_lapse(head[1])
	if now < at + window then
		break
	end
	redis.call('ZREM', lapsed, head[1])
end
if abandoned > 0 then
	redis.call('HINCRBY', meta, 'abandoned', int(abandoned))
end

local m = redis.call('HMGET', meta, 'seq', 'serving', 'drawn', 'credit')
local seq, serving = num(m[1]), num(m[2])
if ARGV[4] == '1' and m[3] ~= '1' then
	redis.call('HSET', meta, 'drawn', '1')
	-- A draw over fans some of whom are already in would reorder the past;
	-- when admission has begun, the draw is empty and everyone stays FIFO.
	if serving == 0 then
		redis.call('HSET', meta, 'drawsize', int(seq))
	end
end
if ARGV[3] ~= '1' or now < num(redis.call('HGET', meta, 'settle')) then
	redis.call('HSET', meta, 'credit', '0', 'pending', int(pending))
	return keep_alive()
end

-- The budget accrues per second, keeping at most one second's worth (and at
-- least one visitor's) banked; the same double arithmetic as the memory store.
local per_second = tonumber(ARGV[5]) / 60
local credit = math.min(num(m[4]) + per_second * elapsed, math.max(per_second, 1))
local n = 0
local room = free(tonumber(ARGV[6]), pending)
local waiting = seq - serving
if ARGV[11] == '1' then
	-- The random method: when the places drawn so far are all in and visitors
	-- wait, draw everyone waiting into a new epoch; admit drawn places only.
	local epochs = parse_epochs(redis.call('HGET', meta, 'epochs'))
	local drawn_end, number = 0, 0
	if #epochs > 0 then
		local last = epochs[#epochs]
		drawn_end, number = last[1] + last[2], last[3]
	elseif redis.call('HGET', meta, 'drawn') == '1' then
		drawn_end = num(redis.call('HGET', meta, 'drawsize'))
	end
	if serving >= drawn_end and waiting > 0 then
		epochs[#epochs + 1] = {serving, waiting, number + 1}
		while #epochs > MAX_EPOCHS do
			table.remove(epochs, 1)
		end
		redis.call('HSET', meta, 'epochs', format_epochs(epochs))
		record_draw(serving, waiting, number + 1, now)
		drawn_end = serving + waiting
	end
	waiting = drawn_end - math.min(drawn_end, serving)
end
if credit >= 1 and room > 0 and waiting > 0 then
	n = math.min(math.floor(credit), room, waiting)
end
if n > 0 then
	redis.call('ZADD', batches, int(serving), batch(serving, n, 0, now))
	record_admission(serving, n, now)
	redis.call('HINCRBY', meta, 'serving', int(n))
	redis.call('HINCRBY', meta, 'admitted', int(n))
	pending = pending + n
	credit = credit - n
end
redis.call('HSET', meta, 'credit', float(credit), 'pending', int(pending))
return keep_alive()
