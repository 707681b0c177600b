-- Init: create the room, or raise its counters to at least the seed's.
-- ARGV: seq, serving, admitted, claimed, abandoned, held, held until,
-- draw closed (0/1), draw size, ttl (ms), incarnation, epochs
-- ("start:size:number,..."), what survives a loss (JSON, see restore below),
-- then the admission batches still in their grace window, each
-- "start:count:claimed:at"
local counters = {'seq', 'serving', 'admitted', 'claimed', 'abandoned'}
local ttl = ARGV[10]
local ext = cjson.decode(ARGV[13])
local first_batch = 14
if ext.raise and redis.call('EXISTS', meta) == 0 then
	return false -- a partial seed never re-creates a lost room
end

-- What a seed restores whether or not the room exists (Seed in store.go):
-- newer overrides, the forgotten places, the end of the last waitlist, and
-- sessions known from passes.
local function restore()
	if ext.ver > num(redis.call('HGET', meta, 'ver')) then
		redis.call('HSET', meta, 'ovr', ext.ovr, 'ver', int(ext.ver))
	end
	if ext.forgot > num(redis.call('HGET', meta, 'forgot')) then
		redis.call('HSET', meta, 'forgot', int(ext.forgot))
	end
	if ext.skipped > num(redis.call('HGET', meta, 'skipped')) then
		redis.call('HSET', meta, 'skipped', int(ext.skipped))
	end
	if ext.idledout > num(redis.call('HGET', meta, 'idledout')) then
		redis.call('HSET', meta, 'idledout', int(ext.idledout))
	end
	if ext.returned > num(redis.call('HGET', meta, 'returned')) then
		redis.call('HSET', meta, 'returned', int(ext.returned))
	end
	if ext.requeued > num(redis.call('HGET', meta, 'requeued')) then
		redis.call('HSET', meta, 'requeued', int(ext.requeued))
	end
	-- The end of the last waitlist, unless the line is one again.
	if ext.wlended > num(redis.call('HGET', meta, 'wlended')) and redis.call('HEXISTS', meta, 'wlsince') == 0 then
		redis.call('HSET', meta, 'wlended', int(ext.wlended))
	end
	for _, s in ipairs(ext.sessions) do
		-- NX: a visitor who holds a session keeps its end.
		if redis.call('ZADD', live, 'NX', int(s[2]), s[1]) == 1 then
			redis.call('ZADD', finished, 'GT', int(s[3]), s[1])
			-- One of the sessions a held slot stood for, if any are left.
			release_held()
		end
	end
	if #ext.sessions > 0 then
		redis.call('PEXPIRE', live, ttl)
		redis.call('PEXPIRE', finished, ttl)
	end
end

-- The priority lanes' counters (from lane 1 on) are raised as the general
-- lane's are, and the places waiting in them counted again; a room the
-- seed creates takes its round robin (see memstore's restoreLanes).
local function restore_lanes(created)
	if #ext.lanes == 0 and ext.lspec == '' then
		return
	end
	local waiting = 0
	for i, l in ipairs(ext.lanes) do
		local f = {lane_field(i, 'seq'), lane_field(i, 'serv'), lane_field(i, 'adm')}
		local cur = redis.call('HMGET', meta, unpack(f))
		for k = 1, 3 do
			if l[k] > num(cur[k]) then
				cur[k] = l[k]
				redis.call('HSET', meta, f[k], int(l[k]))
			end
		end
	end
	for i = 1, MAX_LANES - 1 do
		local m = redis.call('HMGET', meta, lane_field(i, 'seq'), lane_field(i, 'serv'))
		waiting = waiting + num(m[1]) - num(m[2])
	end
	redis.call('HSET', meta, 'lwait', int(waiting))
	if created and ext.lspec ~= '' then
		redis.call('HSET', meta, 'lspec', ext.lspec, 'lcredit', ext.lcredit)
	end
end

-- Held slots and restored admissions: creation-only, or for a blank room the
-- first whole seed.
local function hold_and_restore_batches()
	local held, until_ = tonumber(ARGV[6]), ARGV[7]
	local base = num(redis.call('HGET', meta, 'heldleft'))
	for i = base, base + held - 1 do
		redis.call('ZADD', live, until_, 'held:' .. int(i))
	end
	if held > 0 then
		redis.call('PEXPIRE', live, ttl)
	end
	redis.call('HSET', meta, 'heldleft', int(base + held))
	for i = first_batch, #ARGV do
		local start, count, claimed, at, _, span = parse_batch(ARGV[i])
		redis.call('ZADD', batches, int(start), batch(start, count, claimed, at, true, span))
	end
	if #ARGV >= first_batch then
		redis.call('PEXPIRE', batches, ttl)
	end
end

-- The waitlist going on when the store lost the room, as the node saw it:
-- creation-only, or for a blank room the first whole seed, and never over
-- a waitlist the room has. What it owed is one grant until the seed says.
local function restore_waitlist()
	if ext.wlsince <= 0 or redis.call('HEXISTS', meta, 'wlsince') == 1 then
		return
	end
	local grants = ''
	if ext.wlowed > 0 then
		grants = int(ext.wlowed) .. ':' .. int(ext.wlowedtill)
	end
	redis.call('HSET', meta, 'wlsince', int(ext.wlsince), 'wlfrom', int(ext.wlfrom), 'wladm', int(ext.wladm), 'wlgrants', grants)
	redis.call('HDEL', meta, 'wlended')
	redis.call('RPUSH', history, 'ws:' .. int(ext.wlfrom) .. ':' .. int(ext.wlsince))
	redis.call('PEXPIRE', history, ttl)
end

if redis.call('EXISTS', meta) == 1 then
	local cur = redis.call('HMGET', meta, unpack(counters))
	for i, field in ipairs(counters) do
		if tonumber(ARGV[i]) > num(cur[i]) then
			redis.call('HSET', meta, field, ARGV[i])
		end
	end
	restore()
	restore_lanes(false)
	if ext.whole and redis.call('HGET', meta, 'blank') == '1' then
		-- Created by a node that knew nothing of it: take what this one knew.
		redis.call('HDEL', meta, 'blank')
		redis.call('HSET', meta, 'drawn', ARGV[8], 'drawsize', ARGV[9], 'epochs', ARGV[12], 'pq', ext.pq)
		if ext.lostat > num(redis.call('HGET', meta, 'lostat')) then
			redis.call('HSET', meta, 'lostat', int(ext.lostat))
		end
		if ext.mfrom < tonumber(ARGV[1]) then
			redis.call('HSET', meta, 'mfrom', int(ext.mfrom), 'mto', ARGV[1])
		end
		hold_and_restore_batches()
		restore_waitlist()
	end
	return 0
end

-- A new incarnation: whatever an earlier one left behind (a key that outlived
-- the counters) must not leak into it. The audit trail stays: the changes
-- operators made are still true of the room whatever its line lost.
redis.call('DEL', live, finished, batches, returners, revoked, revokedexp, history, lapsed,
	seen, idled, hbtmp, livecounts, livehead, idledends)
redis.call('HSET', meta,
	'seq', ARGV[1], 'serving', ARGV[2], 'admitted', ARGV[3],
	'claimed', ARGV[4], 'abandoned', ARGV[5],
	'credit', '1', -- a new room lets its first visitor straight in
	'tick', '0', 'pending', '0',
	'drawn', ARGV[8], 'drawsize', ARGV[9],
	'revcur', '0', 'ver', '0', 'inc', ARGV[11], 'epochs', ARGV[12], 'pq', ext.pq,
	'settle', int(ext.settle), 'lostat', int(ext.lostat))
if ext.mfrom < tonumber(ARGV[1]) then
	redis.call('HSET', meta, 'mfrom', int(ext.mfrom), 'mto', ARGV[1])
end
if not ext.whole then
	redis.call('HSET', meta, 'blank', '1')
end
redis.call('PEXPIRE', meta, ttl)

-- Sessions live before the store lost its data keep their slots until they
-- would have ended; their passes are out there. Admissions still in their
-- grace come back, restored: their places are among the held slots, and a
-- claim from one takes a held slot over.
hold_and_restore_batches()
restore()
restore_lanes(true)
restore_waitlist()
return 1
