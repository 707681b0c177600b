-- Shared head of every script. Each script receives the room's keys in the
-- order keys.go builds them; all carry the room's hash tag, so a script touches
-- one Cluster slot only. Times are integer microseconds, passed by the caller.
local meta, live, finished, batches, returners, revoked, revokedexp, history, lapsed =
	KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local seen, idled, hb, hbtmp, livecounts, livehead, idledends =
	KEYS[10], KEYS[11], KEYS[12], KEYS[13], KEYS[14], KEYS[15], KEYS[16]
local left, requeued, requeues, audit, readmits = KEYS[17], KEYS[18], KEYS[19], KEYS[20], KEYS[21]
-- The keys above are the room's; a script given more finds them after.
local ROOM_KEYS = 21

-- Redis formats large Lua numbers in exponent notation, which INCRBY and
-- friends refuse; every integer written goes through int.
local function int(x)
	return string.format('%d', x)
end

-- %.17g round-trips a double exactly, so the rate credit read back is the very
-- value the previous step computed, as in the memory store.
local function float(x)
	return string.format('%.17g', x)
end

local function num(s)
	return tonumber(s) or 0
end

-- Sessions that ended at or before now no longer hold a slot. Returns true, so
-- that it can sit in a condition.
local function expire_sessions(now)
	redis.call('ZREMRANGEBYSCORE', live, '-inf', int(now))
	return true
end

-- Slots the controller may hand out: the cap, less live sessions, admissions
-- not yet claimed, and slots held back for late returners.
local function free(cap, pending)
	return cap - redis.call('ZCARD', live) - pending - redis.call('ZCARD', returners)
end

-- The budget left for the line and for newcomers: the returners waiting at
-- the front are owed a visitor's worth each first.
local function line_credit(credit)
	return credit - redis.call('ZCARD', returners)
end

-- Opens a session and remembers the visitor as having had one until the
-- session ends plus the retention. Returns the session end.
local function open_session(visitor, now, session, retention, ttl)
	local exp = now + session
	redis.call('ZADD', live, int(exp), visitor)
	redis.call('ZADD', finished, int(exp + retention), visitor)
	redis.call('HINCRBY', meta, 'claimed', 1)
	redis.call('ZADD', seen, int(now), visitor)
	redis.call('PEXPIRE', live, ttl)
	redis.call('PEXPIRE', finished, ttl)
	redis.call('PEXPIRE', seen, ttl)
	return exp
end

-- Puts back a session that ended or was lost, to the end it had (the same
-- end gives the same pass id), as used now.
local function resume_session(visitor, ends, now, ttl)
	redis.call('ZADD', live, int(ends), visitor)
	redis.call('ZADD', seen, int(now), visitor)
	redis.call('PEXPIRE', live, ttl)
	redis.call('PEXPIRE', seen, ttl)
end

-- Whether a pass whose end is pass_end (whole seconds; '' for whatever
-- session is live) is one of the session ending at ends (µs): a pass carries
-- its session's end to the second, as its id does.
local function pass_of(ends, pass_end)
	return pass_end == '' or math.floor(tonumber(ends) / 1000000) == tonumber(pass_end)
end

-- Gives up one of the slots held after a loss ("held:<i>", i below heldleft),
-- for a session it stood for that is now accounted for or over. Returns
-- whether one was still held: they all end at once, and once they have,
-- there are none left to give.
local function release_held()
	local held = num(redis.call('HGET', meta, 'heldleft'))
	if held == 0 then
		return false
	end
	if redis.call('ZREM', live, 'held:' .. int(held - 1)) == 0 then
		redis.call('HSET', meta, 'heldleft', 0)
		return false
	end
	redis.call('HSET', meta, 'heldleft', int(held - 1))
	return true
end

-- An admission batch is one sorted-set member, scored by its first place:
-- "start:count:claimed:at", then ":s<span>" when its count of live places
-- spans more places (ghosts were skipped among them), then ":r" when the batch
-- was restored by a re-seed (its unclaimed places are held slots, not pending
-- ones). Only claimed changes, by replacing the member. Returns start, count,
-- claimed, at, restored, span (the places it covers).
local function parse_batch(m)
	local start, count, claimed, at, rest = string.match(m, '^(%d+):(%d+):(%d+):(%-?%d+)(.*)$')
	count = tonumber(count)
	local span = tonumber(string.match(rest, '^:s(%d+)') or count)
	return tonumber(start), count, tonumber(claimed), tonumber(at), string.sub(rest, -2) == ':r', span
end

local function batch(start, count, claimed, at, restored, span)
	local m = int(start) .. ':' .. int(count) .. ':' .. int(claimed) .. ':' .. int(at)
	if span and span ~= count then
		m = m .. ':s' .. int(span)
	end
	if restored then
		m = m .. ':r'
	end
	return m
end

-- An admission whose grace ended with places unclaimed is one member of the
-- lapsed set, scored by its first place: "start:count:at", at being when its
-- grace ended. Their holders may come back at the front until the return
-- window has passed since.
local function parse_lapse(m)
	local start, count, at = string.match(m, '^(%d+):(%d+):(%-?%d+)$')
	return tonumber(start), tonumber(count), tonumber(at)
end

local function lapse(start, count, at)
	return int(start) .. ':' .. int(count) .. ':' .. int(at)
end

-- The rolling draws of the random method live in one meta field,
-- "start:size:number,..." oldest first; at most MAX_EPOCHS are kept.
local MAX_EPOCHS = 64

local function parse_epochs(s)
	local out = {}
	for start, size, number in string.gmatch(s or '', '(%d+):(%d+):(%d+)') do
		out[#out + 1] = {tonumber(start), tonumber(size), tonumber(number)}
	end
	return out
end

-- Writes a list as a meta field: each element as one writes it, "," between.
local function format_list(list, one)
	local parts = {}
	for i, e in ipairs(list) do
		parts[i] = one(e)
	end
	return table.concat(parts, ',')
end

local function format_epochs(epochs)
	return format_list(epochs, function(e)
		return int(e[1]) .. ':' .. int(e[2]) .. ':' .. int(e[3])
	end)
end

-- The phase pre-queues (waitingroom/phasequeue.go) live in one meta field,
-- "phase:start:count:closed:starts:draw,..." oldest first (starts in µs);
-- at most MAX_PHASE_RANGES are kept.
local MAX_PHASE_RANGES = 16

-- Each range is {phase, start, count, closed (boolean), starts, draw ('0'/'1')}.
local PHASE_RANGE = '([%w_%-]+):(%d+):(%d+):(%d):(%-?%d+):(%d)'

local function format_phase_ranges(ranges)
	return format_list(ranges, function(r)
		return r[1] .. ':' .. int(r[2]) .. ':' .. int(r[3]) .. ':' .. (r[4] and '1' or '0') .. ':' .. int(r[5]) .. ':' .. r[6]
	end)
end

-- Brings the phase pre-queues to now, as waitingroom.SettlePhaseRanges
-- does: the open one whose start has come closes with the keys given so
-- far, and the pre-queue spec names ("<phase>,<opens>,<starts>,<draw>", µs;
-- "": none) opens at the next key if it has not. A range drawn now resets
-- the beats, given by key. Returns the key the line is held at while a
-- range is open, else nil. Costs one read when there is nothing to do.
local function settle_phases(now, spec)
	local cur = redis.call('HGET', meta, 'pq')
	if (not cur or cur == '') and spec == '' then
		return nil
	end
	local ranges = {}
	for ph, start, count, closed, starts, draw in string.gmatch(cur or '', PHASE_RANGE) do
		ranges[#ranges + 1] = {ph, tonumber(start), tonumber(count), closed == '1', tonumber(starts), draw}
	end
	local seq = num(redis.call('HGET', meta, 'seq'))
	local changed, drew = false, false
	local function close(r)
		r[4], r[3] = true, seq - r[2]
		changed = true
		drew = drew or r[6] == '1'
	end
	for _, r in ipairs(ranges) do
		if not r[4] and now >= r[5] then
			close(r)
		end
	end
	if spec ~= '' then
		local ph, opens, starts, draw = string.match(spec, '^([%w_%-]+),(%-?%d+),(%-?%d+),(%d)$')
		opens, starts = tonumber(opens), tonumber(starts)
		local known = false
		for _, r in ipairs(ranges) do
			known = known or r[1] == ph
		end
		if not known and now >= opens and now < starts then
			for _, r in ipairs(ranges) do
				if not r[4] then
					close(r)
				end
			end
			ranges[#ranges + 1] = {ph, seq, 0, false, starts, draw}
			while #ranges > MAX_PHASE_RANGES do
				table.remove(ranges, 1)
			end
			changed = true
		end
	end
	if changed then
		redis.call('HSET', meta, 'pq', format_phase_ranges(ranges))
	end
	if drew then
		redis.call('HDEL', meta, 'wseq')
		redis.call('DEL', left)
	end
	for _, r in ipairs(ranges) do
		if not r[4] then
			return r[2]
		end
	end
	return nil
end

-- The public history (waitingroom/history.go) is a list of entries
-- "a:start:count:at" (an admission) and "d:start:size:number:at" (a draw of
-- the random method), times in µs. An admission that continues the last
-- entry within the same second extends it, so admissions on the spot cost
-- one entry a second, not one a visitor; the memory store does the same.
local function record_admission(start, n, now)
	if n <= 0 then
		return
	end
	local last = redis.call('LINDEX', history, -1)
	if last then
		local s, c, at = string.match(last, '^a:(%d+):(%d+):(%-?%d+)$')
		if s and tonumber(s) + tonumber(c) == start and math.floor(tonumber(at) / 1000000) == math.floor(now / 1000000) then
			redis.call('LSET', history, -1, 'a:' .. s .. ':' .. int(tonumber(c) + n) .. ':' .. at)
			return
		end
	end
	redis.call('RPUSH', history, 'a:' .. int(start) .. ':' .. int(n) .. ':' .. int(now))
end

local function record_draw(start, size, number, now)
	redis.call('RPUSH', history, 'd:' .. int(start) .. ':' .. int(size) .. ':' .. int(number) .. ':' .. int(now))
end

-- Liveness (waitingroom/liveness.go): heartbeat windows are bitmaps, one per
-- window and block of BEAT_BLOCK places, "<hb>:<window>:<block>", bit i set
-- when place block*BEAT_BLOCK+i was seen in the window. A block is at most
-- 3,968 bytes, so that with its header it fits a 4 KiB allocation; beat.lua
-- writes it with BITOP, which makes it exactly as long as its last place
-- seen. Counts for nodes go per LIVE_BLOCK places, which divides a block.
local WINDOWS = 5
local LIVE_BLOCK = 1024
local HEAD_BLOCKS = 16
-- The most blocks of LIVE_BLOCK places one controller step counts or walks
-- (waitingroom.LiveStepBlocks): what keeps a step's cost flat in the length
-- of the line.
local STEP_BLOCKS = 256
local BEAT_BLOCK = 31 * LIVE_BLOCK

local function window_key(idx, blk)
	return hb .. ':' .. int(idx) .. ':' .. int(blk)
end

-- The window records: "idx:seq,..." in meta field 'wseq', the order key
-- counter at the first step of each of the last windows.
local function parse_wseq(s)
	local out = {}
	for idx, seq in string.gmatch(s or '', '(%d+):(%d+)') do
		out[#out + 1] = {tonumber(idx), tonumber(seq)}
	end
	return out
end

-- Records the counter at the first step of the window holding now, and
-- returns the first key whose holder may be judged (0: none may), as
-- memstore's noteWindow.
local function judge_from(now, win)
	if win <= 0 then
		return 0
	end
	local cur = math.floor(now / win)
	local recs = parse_wseq(redis.call('HGET', meta, 'wseq'))
	if #recs == 0 or recs[#recs][1] < cur then
		recs[#recs + 1] = {cur, num(redis.call('HGET', meta, 'seq'))}
		while #recs > WINDOWS + 1 do
			table.remove(recs, 1)
		end
		local parts = {}
		for i, r in ipairs(recs) do
			parts[i] = int(r[1]) .. ':' .. int(r[2])
		end
		redis.call('HSET', meta, 'wseq', table.concat(parts, ','))
	end
	for i = #recs, 1, -1 do
		if recs[i][1] ~= cur - (#recs - i) then
			return 0 -- a gap: some window saw no step
		end
		if recs[i][1] == cur - WINDOWS then
			return recs[i][2]
		end
	end
	return 0
end

-- Writes into hbtmp the union of the looked-at windows over block blk.
local function union(now, win, blk)
	local cur = math.floor(now / win)
	local ks = {}
	for idx = cur - WINDOWS + 1, cur do
		ks[#ks + 1] = window_key(idx, blk)
	end
	redis.call('BITOP', 'OR', hbtmp, unpack(ks))
end

-- Live places in [a, b), both within block blk whose union is in hbtmp.
local function count_live(blk, a, b)
	if a >= b then
		return 0
	end
	local base = blk * BEAT_BLOCK
	return redis.call('BITCOUNT', hbtmp, a - base, b - 1 - base, 'BIT')
end

-- Hands out the next order keys, one per visitor, in order, and admits on the
-- spot those who may be (see join.lua). visitor(i) names the i-th of the n
-- visitors (from 0); it is asked only for those admitted, so a batch of fans
-- who wait costs no work per fan beyond the reply.
-- Returns the first key, how many were admitted (always the first ones: a
-- visitor is admitted only if nobody waits ahead) and their session end (0
-- when none was), rather than three figures per visitor: keys run on from
-- the first, and everyone admitted in one call shares now and the session.
local function join_visitors(now, open, cap, session, retention, ttl, n, visitor)
	local first = redis.call('HINCRBY', meta, 'seq', n) - n
	local admitted, exp = 0, 0
	if open then
		local m = redis.call('HMGET', meta, 'serving', 'credit', 'pending', 'lwait')
		local credit = num(m[2])
		-- Ended sessions are swept only when a slot could matter: fans who will
		-- wait anyway (the common case in a crowd) cost no sorted-set work.
		-- Nobody may wait in another lane either (see join_lane).
		if first == num(m[1]) and credit >= 1 and num(m[4]) == 0 then
			expire_sessions(now)
			local slots = free(cap, num(m[3]))
			-- Returners waiting at the front go first.
			local owed = redis.call('ZCARD', returners)
			while admitted < n and credit - owed >= 1 and slots > 0 do
				exp = open_session(visitor(admitted), now, session, retention, ttl)
				admitted = admitted + 1
				credit = credit - 1
				slots = slots - 1
			end
			if admitted > 0 then
				record_admission(first, admitted, now)
				redis.call('PEXPIRE', history, ttl)
				redis.call('HINCRBY', meta, 'serving', admitted)
				redis.call('HINCRBY', meta, 'admitted', admitted)
				redis.call('HSET', meta, 'credit', float(credit))
			end
		end
	end
	return first, admitted, exp
end

-- Whether a visitor requeued before order (0: any) still waits at the front:
-- one still among the returners, whom each controller step keeps to those
-- who asked within the returner window (and drops from requeued with them).
-- Looks at the first 16 in order, which those steps keep waiting.
local function requeued_ahead(order)
	local head = redis.call('ZRANGE', requeued, 0, 15, 'WITHSCORES')
	for i = 1, #head, 2 do
		if order ~= 0 and tonumber(head[i + 1]) >= order then
			return false
		end
		if redis.call('ZSCORE', returners, head[i]) then
			return true
		end
	end
	return false
end

-- Returners: fans coming back at the front (a lapsed admission, a skipped
-- ghost, an idled-out session), in the returners set while they wait. They are
-- let in within the rate: each takes a visitor's worth of the controller's
-- budget, which every step keeps for them before the line or a newcomer gets
-- any (line_credit), and a slot that is free, whoever among them asks first,
-- once no requeued visitor waits (requeued_ahead).
-- Returns nil when the visitor may go in now (their visitor's worth spent;
-- the caller counts what kind of return it was),
-- else the claim status to answer: 4 (held) while the room admits nobody, 2
-- (full) while it has no budget or no slot for them; either way they keep
-- their place at the front by asking again within the returner window.
local function let_returner_in(visitor, now, cap, pending, open, ttl)
	local status
	if not open then
		status = 4
	else
		local credit = num(redis.call('HGET', meta, 'credit'))
		if credit < 1 or redis.call('ZCARD', live) + pending >= cap or requeued_ahead(0) then
			status = 2
		else
			redis.call('HSET', meta, 'credit', float(credit - 1))
			return nil
		end
	end
	redis.call('ZADD', returners, int(now), visitor)
	redis.call('PEXPIRE', returners, ttl)
	return status
end

-- Weighs a joiner before its place is made (see waitingroom.Joiner), by two
-- keys of the room's, either nil: sk, the joiner's seed, holds until when
-- (µs) it bought a place; lk, the joiner's client network, holds the
-- network's theoretical arrival time (µs) under join_limit, a GCRA of one
-- place per interval in bursts of burst (JoinLimit.Take in Go). A seed that
-- bought a place already is refused first, then a network over its limit;
-- otherwise both are recorded, each expiring when it no longer matters, and
-- the caller makes the place. Returns 0, or 1 and the wait (join_limit), or
-- 2 (seed spent): a refused joiner leaves nothing behind.
local function weigh(now, lk, sk, till, interval, burst)
	local fresh
	if sk then
		fresh = redis.call('SET', sk, int(till), 'NX', 'PX', int(math.max(1, math.ceil((till - now) / 1000))))
		if not fresh and num(redis.call('GET', sk)) > now then
			return 2, 0
		end
	end
	local tat
	if lk and interval > 0 then
		tat = math.max(num(redis.call('GET', lk)), now)
		local over = tat - now - (burst - 1) * interval
		if over > 0 then
			if fresh then
				redis.call('DEL', sk)
			end
			return 1, over
		end
		tat = tat + interval
		redis.call('SET', lk, int(tat), 'PX', int(math.ceil((tat - now) / 1000)))
	end
	if sk and not fresh then
		-- The seed's key outlived its time by the server's clock: taken anew.
		redis.call('SET', sk, int(till), 'PX', int(math.max(1, math.ceil((till - now) / 1000))))
	end
	return 0, 0
end

-- Priority lanes (waitingroom/lanes.go; the same rules as memstore's
-- lanes.go). The general lane is the line of a room without lanes; lane i
-- (i >= 1) keeps its counters in meta fields 'l<i>seq', 'l<i>serv' and
-- 'l<i>adm', and its places are i * LANE_BASE + its own keys. 'lwait'
-- counts the places waiting in those lanes, so that a join into an empty
-- room learns in the read it does anyway that nobody waits in one. A room
-- without lanes has none of these fields.
local LANE_BASE = 1099511627776 -- 2^40: waitingroom.LanePlace
local MAX_LANES = 8

local function lane_field(i, f)
	return 'l' .. int(i) .. f
end

-- The serving counter of place's lane, given the general lane's.
local function serving_of(place, serving)
	local lane = math.floor(place / LANE_BASE)
	if lane == 0 then
		return serving
	end
	return lane * LANE_BASE + num(redis.call('HGET', meta, lane_field(lane, 'serv')))
end

-- Hands the visitor the next place of lane (>= 1), admitted on the spot
-- only as a newcomer to a room where nobody waits in any lane would be.
-- Returns the place, whether it was admitted, and the session end.
local function join_lane(now, open, cap, session, retention, ttl, lane, visitor)
	local key = lane * LANE_BASE + redis.call('HINCRBY', meta, lane_field(lane, 'seq'), 1) - 1
	local waiting = redis.call('HINCRBY', meta, 'lwait', 1)
	if not open then
		return key, 0, 0
	end
	local m = redis.call('HMGET', meta, 'seq', 'serving', 'credit', 'pending')
	local credit = num(m[3])
	if num(m[1]) ~= num(m[2]) or waiting ~= 1 or credit < 1 then
		return key, 0, 0
	end
	expire_sessions(now)
	if line_credit(credit) < 1 or free(cap, num(m[4])) <= 0 then
		return key, 0, 0
	end
	local exp = open_session(visitor, now, session, retention, ttl)
	record_admission(key, 1, now)
	redis.call('PEXPIRE', history, ttl)
	redis.call('HINCRBY', meta, lane_field(lane, 'serv'), 1)
	redis.call('HINCRBY', meta, lane_field(lane, 'adm'), 1)
	redis.call('HINCRBY', meta, 'lwait', -1)
	redis.call('HSET', meta, 'credit', float(credit - 1))
	return key, 1, exp
end

-- A step's split between the lanes is one history entry,
-- "l:at:waiting,admitted,credit;...:weights" by lane, with the weights'
-- text the step split by (waitingroom.LaneStep).
local function record_lanes(spec, credit, waiting, got, now)
	local parts = {}
	for i = 1, #got do
		parts[i] = int(waiting[i]) .. ',' .. int(got[i]) .. ',' .. int(credit[i])
	end
	redis.call('RPUSH', history, 'l:' .. int(now) .. ':' .. table.concat(parts, ';') .. ':' .. spec)
end

-- Shares a step's n admissions between the lanes by weight, as
-- waitingroom.SplitAdmissions does (a smooth weighted round robin whose
-- credits meta keeps in 'lcredit', for the weights 'lspec' names), with
-- general places of the general lane waiting, and lets in every other
-- lane's share in its order. Returns the general lane's share and the
-- places let in from the other lanes.
local function share_lanes(spec, weights, general, n, now, ttl)
	local cr = {}
	local st = redis.call('HMGET', meta, 'lspec', 'lcredit')
	if st[1] == spec then
		for c in string.gmatch(st[2] or '', '(%-?%d+)') do
			cr[#cr + 1] = tonumber(c)
		end
	end
	if #cr ~= #weights then
		cr = {}
		for i = 1, #weights do
			cr[i] = 0
		end
	end
	local waiting, got, before = {general}, {}, {}
	for i = 1, #weights do
		if i > 1 then
			local m = redis.call('HMGET', meta, lane_field(i - 1, 'seq'), lane_field(i - 1, 'serv'))
			waiting[i] = num(m[1]) - num(m[2])
		end
		got[i], before[i] = 0, cr[i]
	end
	for _ = 1, n do
		local total, best = 0, 0
		for i = 1, #weights do
			-- A lane of weight 0 admits nobody while it is in force.
			if weights[i] > 0 and waiting[i] > got[i] then
				cr[i] = cr[i] + weights[i]
				total = total + weights[i]
				if best == 0 or cr[i] > cr[best] then
					best = i
				end
			end
		end
		if best == 0 then
			break
		end
		cr[best] = cr[best] - total
		got[best] = got[best] + 1
	end
	local parts = {}
	for i = 1, #cr do
		parts[i] = int(cr[i])
	end
	redis.call('HSET', meta, 'lspec', spec, 'lcredit', table.concat(parts, ','))
	record_lanes(spec, before, waiting, got, now)
	local others = 0
	for i = 2, #weights do
		local k = got[i]
		if k > 0 then
			local start = (i - 1) * LANE_BASE + num(redis.call('HGET', meta, lane_field(i - 1, 'serv')))
			redis.call('ZADD', batches, int(start), batch(start, k, 0, now, false, k))
			redis.call('PEXPIRE', batches, ttl)
			record_admission(start, k, now)
			redis.call('HINCRBY', meta, lane_field(i - 1, 'serv'), int(k))
			redis.call('HINCRBY', meta, lane_field(i - 1, 'adm'), int(k))
			others = others + k
		end
	end
	-- (Written even when 0: the field says the room has had lanes.)
	redis.call('HINCRBY', meta, 'lwait', int(-others))
	redis.call('PEXPIRE', history, ttl)
	return got[1], others
end

-- The waitlist (waitingroom/waitlist.go, docs/waitlist.md): the meta hash
-- keeps, while the line is one, 'wlsince' (µs), 'wlfrom' (serving when it
-- began), 'wladm' (fans let in from it) and 'wlgrants', the units let in
-- for and still owed, "units:until(µs)" joined by ',', oldest first.

-- The grants still owed at now, as a list of {units, until}, and their sum.
local function waitlist_grants(now)
	local kept, owed = {}, 0
	for u, till in string.gmatch(redis.call('HGET', meta, 'wlgrants') or '', '(%d+):(%-?%d+)') do
		if tonumber(till) > now then
			kept[#kept + 1] = {tonumber(u), tonumber(till)}
			owed = owed + tonumber(u)
		end
	end
	return kept, owed
end

local function save_waitlist_grants(grants)
	local parts = {}
	for _, g in ipairs(grants) do
		parts[#parts + 1] = int(g[1]) .. ':' .. int(g[2])
	end
	redis.call('HSET', meta, 'wlgrants', table.concat(parts, ','))
end

-- A fall of the supply by fallen units pays the oldest grants first
-- (waitingroom.PayWaitlist).
local function pay_waitlist(fallen)
	if not redis.call('HGET', meta, 'wlgrants') then
		return
	end
	local out = {}
	for u, till in string.gmatch(redis.call('HGET', meta, 'wlgrants'), '(%d+):(%-?%d+)') do
		local units = tonumber(u)
		local pay = math.min(units, fallen)
		fallen = fallen - pay
		if units > pay then
			out[#out + 1] = {units - pay, tonumber(till)}
		end
	end
	save_waitlist_grants(out)
end
