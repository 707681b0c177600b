-- Claim: open a session for a visitor whose place is below serving.
-- ARGV: now, visitor, place, cap, session, retention (µs), ttl (ms),
-- returner window (µs), return window (µs), open (0/1)
-- Returns {status, session end}: 0 claimed, 1 not yet, 2 full, 3 finished,
-- 4 held, 5 passed, 6 requeued; nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local now, visitor, place = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local cap, session, retention, ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
expire_sessions(now)

local exp = redis.call('ZSCORE', live, visitor)
if exp then
	-- Idempotent: the live session. Handing out its pass is a use of it, or
	-- a pass signed a moment before an idle-out would outlive the session.
	redis.call('ZADD', seen, int(now), visitor)
	return {0, tonumber(exp)}
end
local m = redis.call('HMGET', meta, 'serving', 'pending', 'forgot')
local pending = num(m[2])
-- The serving counter of the place's lane (see serving_of in lib.lua).
m[1] = serving_of(place, num(m[1]))

-- Opens the new session of a requeued visitor let in again. It must end in
-- a later second than the failed one (its end is the finished mark less the
-- retention), or it would share the pass id every node now refuses: let in
-- within the second the failed one began, it ends a second after it.
local function open_again()
	local exp = now + session
	local fin = redis.call('ZSCORE', finished, visitor)
	if fin then
		local failed = math.floor((tonumber(fin) - retention) / 1000000)
		if math.floor(exp / 1000000) <= failed then
			exp = (failed + 1) * 1000000
		end
	end
	return open_session(visitor, now, exp - now, retention, ttl)
end

-- A requeued visitor the controller let in again (advance.lua): the pending
-- slot is theirs.
if redis.call('ZREM', readmits, visitor) == 1 then
	redis.call('HSET', meta, 'pending', int(pending - 1))
	return {0, open_again()}
end

-- A requeued visitor (requeue.lua) asks again: in, into a new session, when
-- nobody requeued before them still waits and a visitor's worth of budget
-- and a slot are free; otherwise they keep their place at the front by
-- asking within the returner window (6: requeued), and lose it by not
-- (5: passed).
local order = redis.call('ZSCORE', requeued, visitor)
if order then
	local asked = redis.call('ZSCORE', returners, visitor)
	if not asked or now - tonumber(asked) >= tonumber(ARGV[8]) then
		redis.call('ZREM', requeued, visitor)
		redis.call('ZREM', returners, visitor)
		return {5, 0}
	end
	redis.call('ZADD', returners, int(now), visitor)
	local credit = num(redis.call('HGET', meta, 'credit'))
	if ARGV[10] ~= '1' or requeued_ahead(tonumber(order)) or credit < 1 or redis.call('ZCARD', live) + pending >= cap then
		return {6, 0}
	end
	redis.call('HSET', meta, 'credit', float(credit - 1))
	redis.call('ZREM', returners, visitor)
	redis.call('ZREM', requeued, visitor)
	redis.call('HINCRBY', meta, 'returned', 1)
	return {0, open_again()}
end

-- A session that idled out comes back to the end it had, once per idle-out:
-- within the return window after the idle-out (or while holding a returner's
-- place, having come back in time) at the front, within the rate (see
-- let_returner_in); never while the room admits nobody; with no time left it has finished; after
-- the window, rejoining at the back. A ticket's sessions together never
-- outlast one session_duration.
local idle_at = redis.call('ZSCORE', idled, visitor)
if idle_at and place < num(m[1]) then
	local ends = redis.call('ZSCORE', idledends, visitor)
	local asked = redis.call('ZSCORE', returners, visitor)
	local returning = asked and now - tonumber(asked) < tonumber(ARGV[8])
	redis.call('ZREM', returners, visitor)
	if not ends or now >= tonumber(ends) then
		redis.call('ZREM', idled, visitor)
		redis.call('ZREM', idledends, visitor)
		return {3, 0}
	end
	if not returning and now >= tonumber(idle_at) + tonumber(ARGV[9]) then
		redis.call('ZREM', idled, visitor)
		redis.call('ZREM', idledends, visitor)
		return {5, 0}
	end
	local status = let_returner_in(visitor, now, cap, pending, ARGV[10] == '1', ttl)
	if status then
		return {status, 0}
	end
	redis.call('HINCRBY', meta, 'returned', 1)
	redis.call('ZREM', idled, visitor)
	redis.call('ZREM', idledends, visitor)
	-- The same end gives the same pass id: the origin sees one session.
	resume_session(visitor, tonumber(ends), now, ttl)
	return {0, tonumber(ends)}
end
local forget = redis.call('ZSCORE', finished, visitor)
if forget and now < tonumber(forget) then
	return {3, 0}
end
if place >= num(m[1]) then
	return {1, 0}
end
-- Admitted before the store lost its data, past the admission window then:
-- who claimed is lost, so the place is spent (see Snapshot.Forgotten).
if place < num(m[3]) then
	return {3, 0}
end

-- The batch holding place, if it is still within its grace window: the one
-- with the greatest start at or below place, if it reaches that far.
local b = redis.call('ZREVRANGEBYSCORE', batches, int(place), '-inf', 'LIMIT', 0, 1)
-- The lapse holding place, if one was recorded: while the place's batch is
-- within its grace, only for a ghost the controller passed over in it.
local l = redis.call('ZREVRANGEBYSCORE', lapsed, int(place), '-inf', 'LIMIT', 0, 1)
local lapse_holds = false
if #l > 0 then
	local start, count = parse_lapse(l[1])
	lapse_holds = place < start + count
end
-- A ghost's claim takes none of the slots of its batch, which are the live
-- places': it comes back as a lapsed admission, below.
if #b > 0 and not lapse_holds then
	local start, count, claimed, at, restored, span = parse_batch(b[1])
	-- Every place of an admission restored after a loss was claimed before
	-- it: this is one of them again, whose session ended.
	if restored and place < start + span and claimed >= count then
		return {3, 0}
	end
	-- A batch with every slot claimed has none left for this place: it was
	-- claimed already, by this visitor before the store forgot them.
	if place < start + span and claimed < count then
		-- One of the sessions a held slot stood for takes that slot. When
		-- none is left (a session the nodes' views did not know, begun or
		-- resumed just before the loss, reclaimed it), the place waits at
		-- the front for the next slot, never above the cap.
		if restored and not release_held() and redis.call('ZCARD', live) + pending >= cap then
			redis.call('ZADD', returners, int(now), visitor)
			redis.call('PEXPIRE', returners, ttl)
			return {2, 0}
		end
		redis.call('ZREM', returners, visitor)
		-- Add before removing: a set emptied for a moment would be deleted
		-- and come back without its TTL.
		redis.call('ZADD', batches, int(start), batch(start, count, claimed + 1, at, restored, span))
		redis.call('ZREM', batches, b[1])
		if not restored then
			redis.call('HSET', meta, 'pending', int(pending - 1))
		end
		return {0, open_session(visitor, now, session, retention, ttl)}
	end
end

-- The admission lapsed unclaimed, or the place was skipped as a ghost. Within
-- the return window after its grace (or while holding a returner's place,
-- having come back in time) the visitor goes to the front, within the rate
-- (see let_returner_in). Never while the room admits nobody; and after the
-- window their turn has passed.
local asked = redis.call('ZSCORE', returners, visitor)
local returning = asked and now - tonumber(asked) < tonumber(ARGV[8])
redis.call('ZREM', returners, visitor)
if not returning then
	local within = false
	if #b > 0 then
		-- The controller reached the place within the grace still running
		-- (it was skipped as a ghost, or its batch's slots are taken).
		local start, _, _, _, _, span = parse_batch(b[1])
		within = place < start + span
	end
	if not within and #l > 0 then
		local start, count, at = parse_lapse(l[1])
		within = place < start + count and now < at + tonumber(ARGV[9])
	end
	if not within then
		return {5, 0}
	end
end
local status = let_returner_in(visitor, now, cap, pending, ARGV[10] == '1', ttl)
if status then
	return {status, 0}
end
redis.call('HINCRBY', meta, 'returned', 1)
return {0, open_session(visitor, now, session, retention, ttl)}
