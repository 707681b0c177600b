-- Advance: one step of the admission controller. Every node calls it every
-- second; the tick recorded in the room makes all but the first call in a
-- given second a no-op, so no node has to be the leader.
-- ARGV: now (µs), tick (unix s), open (0/1), close draw (0/1), rate (per
-- minute), cap, grace (µs), returner window (µs), max catch-up ticks, ttl (ms),
-- reshuffle (0/1), return window (µs), session idle (µs, 0: off), heartbeat
-- window (µs, 0: no place is judged), retention (µs), session (µs), pace decay per
-- second, the lanes' weights as text and as numbers ("," between them; both
-- "" without lanes: see share_lanes in lib.lua), waitlist (0/1), units a fan
-- let in from the waitlist (0: nobody now), the phase pre-queue open (see
-- settle_phases in lib.lua)
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
local session_idle, win = tonumber(ARGV[13]), tonumber(ARGV[14])
local retention, session = tonumber(ARGV[15]), tonumber(ARGV[16])

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
-- Requeued visitors who stopped asking went with the returners: drop them
-- from the order too (a bounded few from its head per step), and the counts
-- of requeues past their time.
for _, v in ipairs(redis.call('ZRANGE', requeued, 0, 63)) do
	if not redis.call('ZSCORE', returners, v) then
		redis.call('ZREM', requeued, v)
	end
end
redis.call('ZREMRANGEBYSCORE', requeues, '-inf', int(now))

-- Sessions unused for the idle timeout end: their slots go to the next fans,
-- every node refuses their passes (a revocation naming the visitor, "~" and
-- the idle-out time in place of a pass id), and a claim from their tickets is
-- a lapsed admission.
if session_idle > 0 then
	local idle = redis.call('ZRANGEBYSCORE', seen, '-inf', int(now - session_idle))
	for _, v in ipairs(idle) do
		local ends = redis.call('ZSCORE', live, v)
		if ends then
			redis.call('ZREM', live, v)
			redis.call('ZADD', idled, int(now), v)
			redis.call('PEXPIRE', idled, ARGV[10])
			-- Its holder may come back to the time it had left, never more.
			redis.call('ZADD', idledends, ends, v)
			redis.call('PEXPIRE', idledends, ARGV[10])
			redis.call('HINCRBY', meta, 'idledout', 1)
			local cursor = redis.call('HINCRBY', meta, 'revcur', 1)
			local member = int(cursor) .. ':' .. ends .. ':~' .. int(now) .. ':' .. v
			redis.call('ZADD', revoked, int(cursor), member)
			redis.call('ZADD', revokedexp, ends, member)
		end
		redis.call('ZREM', seen, v)
	end
end
-- Whoever was last seen a whole session ago has most likely no session any
-- more (a session may outlast the current length if it was shortened): drop
-- their entries, a bounded few per step.
for _, v in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', '(' .. int(now - session), 'LIMIT', 0, 1000)) do
	if not redis.call('ZSCORE', live, v) then
		redis.call('ZREM', seen, v)
	end
end
redis.call('ZREMRANGEBYSCORE', idled, '-inf', int(now - retention))
redis.call('ZREMRANGEBYSCORE', idledends, '-inf', int(now))

-- Batches are in admission order within each lane (scored by first place,
-- a lane's above the general lane's), so the lapsed ones are at the head
-- of each lane's.
local grace = tonumber(ARGV[7])
local pending, abandoned = num(redis.call('HGET', meta, 'pending')), 0
local lane_weights = {}
for w in string.gmatch(ARGV[19] or '', '(%d+)') do
	lane_weights[#lane_weights + 1] = tonumber(w)
end
-- Ends the admissions at the head of the batches scored in [lo, hi) (all
-- of them without hi) whose grace is over: their unclaimed places lapse.
local function lapse_batches(lo, hi)
	while true do
		local head
		if hi then
			head = redis.call('ZRANGEBYSCORE', batches, int(lo), '(' .. int(hi), 'LIMIT', 0, 1)
		else
			head = redis.call('ZRANGE', batches, 0, 0)
		end
		if #head == 0 then
			return
		end
		local start, count, claimed, at, restored, span = parse_batch(head[1])
		if now < at + grace then
			return
		end
		if not restored then
			pending = pending - (count - claimed)
		end
		abandoned = abandoned + (count - claimed)
		redis.call('ZREM', batches, head[1])
		if count > claimed or span > count then
			-- The ghosts skipped among its places lapse with it: one record
			-- over the batch replaces theirs.
			redis.call('ZREMRANGEBYSCORE', lapsed, int(start), int(start + span - 1))
			redis.call('ZADD', lapsed, int(start), lapse(start, span, at + grace))
			redis.call('PEXPIRE', lapsed, ARGV[10])
		end
	end
end
if #lane_weights == 0 and redis.call('HEXISTS', meta, 'lwait') == 0 then
	lapse_batches(0)
else
	for lane = 0, MAX_LANES - 1 do
		lapse_batches(lane * LANE_BASE, (lane + 1) * LANE_BASE)
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
-- Requeued visitors let in again who did not come for their session within
-- the grace: the slot goes to the next fan, the admission counts as lapsed,
-- and the place at the front is over (their next claim is finished).
for _, v in ipairs(redis.call('ZRANGEBYSCORE', readmits, '-inf', int(now - grace))) do
	redis.call('ZREM', readmits, v)
	pending = pending - 1
	abandoned = abandoned + 1
end
if abandoned > 0 then
	redis.call('HINCRBY', meta, 'abandoned', int(abandoned))
end

-- The phase pre-queues first: one open holds the line at its first key.
local phase_hold = settle_phases(now, ARGV[22] or '')
local m = redis.call('HMGET', meta, 'seq', 'serving', 'drawn', 'credit')
local seq, serving = num(m[1]), num(m[2])
if ARGV[4] == '1' and m[3] ~= '1' then
	redis.call('HSET', meta, 'drawn', '1')
	-- Places drawn are not their keys: the beats so far say nothing of them.
	redis.call('HDEL', meta, 'wseq')
	redis.call('DEL', left)
	-- A draw over fans some of whom are already in would reorder the past;
	-- when admission has begun, the draw is empty and everyone stays FIFO.
	if serving == 0 then
		redis.call('HSET', meta, 'drawsize', int(seq))
	end
end

-- Appends to runs the runs of ghosts ({start, count}) among places [a, b),
-- both within block blk whose union is in hbtmp, joining a run to the last
-- one when it goes on from it. Bits past the end of the union are clear.
local function ghost_runs(blk, a, b, runs)
	local base = blk * BEAT_BLOCK
	local stored = base + 8 * redis.call('STRLEN', hbtmp)
	local p = a
	while p < b do
		local g = p
		if p < stored then
			local e = math.min(b, stored)
			g = redis.call('BITPOS', hbtmp, 0, p - base, e - 1 - base, 'BIT')
			if g >= 0 then
				g = g + base
			elseif e < b then
				g = e
			else
				return
			end
		end
		local q = b
		if g < stored then
			local e = math.min(b, stored)
			local s = redis.call('BITPOS', hbtmp, 1, g - base, e - 1 - base, 'BIT')
			if s >= 0 then
				q = s + base
			end
		end
		local last = runs[#runs]
		if last and last[1] + last[2] == g then
			last[2] = last[2] + q - g
		else
			runs[#runs + 1] = {g, q - g}
		end
		p = q
	end
end

-- Where serving goes to admit up to n live places, from start to end_:
-- places below young, and those in a re-seed's margin, are judged by their
-- beats; the rest are all live. Returns the new serving, the live places
-- admitted, and the runs of ghosts passed over on the way.
local function admit_live(start, end_, young, n)
	local p, got, runs = start, 0, {}
	-- A step walks at most STEP_BLOCKS blocks of ghosts; a longer run of
	-- them is skipped over the next steps.
	local walk = start + STEP_BLOCKS * LIVE_BLOCK
	local cached = -1
	-- Walks the places up to to by their beats, until n are live.
	local function judge(to)
		while got < n and p < to do
			local blk = math.floor(p / BEAT_BLOCK)
			if blk ~= cached then
				union(now, win, blk)
				cached = blk
			end
			local e = math.min(to, (blk + 1) * BEAT_BLOCK)
			local c = count_live(blk, p, e)
			if got + c < n then
				if c < e - p then
					ghost_runs(blk, p, e, runs)
				end
				got, p = got + c, e
			else
				-- The first q with (n - got) live places in [p, q).
				local need, lo, hi = n - got, p + 1, e
				while lo < hi do
					local mid = math.floor((lo + hi) / 2)
					if count_live(blk, p, mid) >= need then
						hi = mid
					else
						lo = mid + 1
					end
				end
				if lo - p > need then
					ghost_runs(blk, p, lo, runs)
				end
				got, p = n, lo
			end
		end
	end
	judge(math.min(young, end_, walk))
	local m = redis.call('HMGET', meta, 'mfrom', 'mto')
	local mf, mt = num(m[1]), num(m[2])
	while got < n and p < end_ and p < walk do
		if p >= mf and p < mt then
			judge(math.min(mt, end_, walk))
		else
			local to = end_
			if p < mf then
				to = math.min(end_, mf)
			end
			local more = math.min(n - got, to - p)
			got, p = got + more, p + more
		end
	end
	return p, got, runs
end

-- Whether place p lies in one of the runs.
local function in_runs(runs, p)
	for _, r in ipairs(runs) do
		if p >= r[1] and p < r[1] + r[2] then
			return true
		end
	end
	return false
end

-- Adds place p (in none of them) to the sorted runs, joining the runs it
-- touches, as memstore's addToRuns.
local function add_to_runs(runs, p)
	local i = #runs + 1
	for j, r in ipairs(runs) do
		if r[1] > p then
			i = j
			break
		end
	end
	local prev, nxt = runs[i - 1], runs[i]
	local join_prev = prev and prev[1] + prev[2] == p
	local join_next = nxt and nxt[1] == p + 1
	if join_prev and join_next then
		prev[2] = prev[2] + 1 + nxt[2]
		table.remove(runs, i)
	elseif join_prev then
		prev[2] = prev[2] + 1
	elseif join_next then
		nxt[1], nxt[2] = nxt[1] - 1, nxt[2] + 1
	else
		table.insert(runs, i, {p, 1})
	end
end

-- admit_live with the places whose holders left (leave.lua) passed over as
-- ghosts, whatever their beats or their youth say: each left place that
-- admit_live let in is a ghost instead, and as many more live places are
-- looked for beyond.
local function admit_present(end_, young, n)
	local to, got, runs = admit_live(serving, end_, young, n)
	local from = serving
	while true do
		local out = 0
		for _, s in ipairs(redis.call('ZRANGEBYSCORE', left, int(from), '(' .. int(to))) do
			local p = tonumber(s)
			if not in_runs(runs, p) then
				add_to_runs(runs, p)
				out = out + 1
			end
		end
		if out == 0 then
			break
		end
		got = got - out
		if to >= end_ then
			break
		end
		local more, got2, runs2 = admit_live(to, end_, young, out)
		for _, g in ipairs(runs2) do
			local last = runs[#runs]
			if last and last[1] + last[2] == g[1] then
				last[2] = last[2] + g[2]
			else
				runs[#runs + 1] = g
			end
		end
		got = got + got2
		from, to = to, more
	end
	return to, got, runs
end

-- The pace record, as waitingroom.Pace.Step keeps it: the same arithmetic as
-- the memory store, with the decay passed in. got live places were admitted
-- in a step during which people waited (waiting).
local function step_pace(waiting, got)
	local pm = redis.call('HMGET', meta, 'pace_places', 'pace_secs', 'pace_moves', 'pace_still')
	local places, secs, moves, still = num(pm[1]), num(pm[2]), num(pm[3]), num(pm[4])
	if waiting then
		local decay = tonumber(ARGV[17])
		for _ = 1, elapsed do
			places = places * decay
			secs = secs * decay
			moves = moves * decay
		end
		places = places + got
		secs = secs + elapsed
		if got > 0 then
			moves = moves + 1
			still = 0
		else
			still = still + elapsed
		end
	else
		still = 0
	end
	redis.call('HSET', meta, 'pace_places', float(places), 'pace_secs', float(secs),
		'pace_moves', float(moves), 'pace_still', int(still))
end

-- The waitlist begins at the first step that runs with it, and ends at the
-- first that runs without: its grants are forgotten then, the sale being
-- open again (or over). Each is recorded in the history, "ws:from:at" and
-- "we:serving:admitted:at".
local waitlist, wl_units = ARGV[20] == '1', tonumber(ARGV[21] or '0')
local wl_since = redis.call('HGET', meta, 'wlsince')
if waitlist and not wl_since then
	redis.call('HSET', meta, 'wlsince', int(now), 'wlfrom', int(serving), 'wladm', '0', 'wlgrants', '')
	redis.call('HDEL', meta, 'wlended')
	redis.call('RPUSH', history, 'ws:' .. int(serving) .. ':' .. int(now))
	redis.call('PEXPIRE', history, ARGV[10])
elseif not waitlist and wl_since then
	redis.call('RPUSH', history, 'we:' .. int(serving) .. ':' .. int(num(redis.call('HGET', meta, 'wladm'))) .. ':' .. int(now))
	redis.call('PEXPIRE', history, ARGV[10])
	redis.call('HDEL', meta, 'wlsince', 'wlfrom', 'wladm', 'wlgrants')
	redis.call('HSET', meta, 'wlended', int(now))
end
waitlist = waitlist and wl_units > 0

-- How many fans the step may let in from the waitlist: what the last supply
-- serves beyond the units owed (waitingroom.WaitlistFans); with the supply,
-- its sample's number and the units owed.
local function waitlist_fans()
	local grants, owed = waitlist_grants(now)
	save_waitlist_grants(grants)
	local last = string.match(redis.call('HGET', meta, 'supply') or '', '([^,]+)$')
	if not last then
		return 0, 0, 0, owed
	end
	local n, units = string.match(last, '^(%d+):(%d+):')
	local supply = tonumber(units)
	if supply <= owed then
		return 0, supply, tonumber(n), owed
	end
	local fans = math.floor((supply - owed) / wl_units)
	if fans == 0 and owed == 0 then
		-- A leftover smaller than one fan's worth, with nothing owed, goes
		-- to the next fan all the same (for what it is).
		fans = 1
	end
	return fans, supply, tonumber(n), owed
end

-- Moves serving forward by the rate budget and the free slots, counted in
-- live places: ghosts on the way are skipped without a slot.
local function admit()
	if (ARGV[3] ~= '1' and not waitlist) or now < num(redis.call('HGET', meta, 'settle')) then
		redis.call('HSET', meta, 'credit', '0', 'pending', int(pending))
		return
	end
	-- The budget accrues per second, keeping at most one second's worth (and
	-- at least one visitor's) banked; the same double arithmetic as the memory
	-- store.
	local per_second = tonumber(ARGV[5]) / 60
	local credit = math.min(num(m[4]) + per_second * elapsed, math.max(per_second, 1))
	-- Requeued visitors go in again first, in the order they were requeued,
	-- each taking the visitor's worth of budget and the slot kept for them
	-- (a pending slot from now, as an admission of the line's), while the
	-- budget and the cap allow; those who stopped asking went with the
	-- returners above. Each counts as returned now; their next claim opens
	-- the session (claim.lua). Letting them in here, not only when they ask,
	-- keeps a node slow to answer their page from letting the line pass
	-- them meanwhile.
	local cap = tonumber(ARGV[6])
	-- (Held while the room waitlists, as returners are: only what comes
	-- back lets anyone in.)
	if not waitlist and credit >= 1 and redis.call('ZCARD', requeued) > 0 then
		local let_in = 0
		for _, v in ipairs(redis.call('ZRANGE', requeued, 0, 63)) do
			if credit < 1 or redis.call('ZCARD', live) + pending >= cap then
				break
			end
			if redis.call('ZSCORE', returners, v) then
				redis.call('ZREM', returners, v)
				redis.call('ZREM', requeued, v)
				redis.call('ZADD', readmits, int(now), v)
				pending = pending + 1
				credit = credit - 1
				let_in = let_in + 1
			end
		end
		if let_in > 0 then
			redis.call('PEXPIRE', readmits, ARGV[10])
			redis.call('HINCRBY', meta, 'returned', let_in)
		end
	end
	-- The returners waiting at the front are owed the budget first: the line
	-- gets what is left once each has a visitor's worth kept for them, so
	-- fans coming back never add to the rate (see let_returner_in).
	local line = line_credit(credit)
	local fans, wl_supply, wl_sample, wl_owed = math.huge, 0, 0, 0
	if waitlist then
		-- Returners are held while the room waitlists (as when paused):
		-- the line gets the rate, and only as many as came back serve.
		line = credit
		fans, wl_supply, wl_sample, wl_owed = waitlist_fans()
	end
	local room = free(tonumber(ARGV[6]), pending)
	local end_ = seq
	if phase_hold then
		-- A phase pre-queue is open: the line goes on up to its first fan,
		-- and its fans wait for the phase's start.
		end_ = math.max(math.min(end_, phase_hold), serving)
	end
	if ARGV[11] == '1' then
		-- The random method: when the places drawn so far are all in and
		-- visitors wait, draw everyone waiting into a new epoch; admit drawn
		-- places only.
		local epochs = parse_epochs(redis.call('HGET', meta, 'epochs'))
		local drawn_end, number = 0, 0
		if #epochs > 0 then
			local last = epochs[#epochs]
			drawn_end, number = last[1] + last[2], last[3]
		elseif redis.call('HGET', meta, 'drawn') == '1' then
			drawn_end = num(redis.call('HGET', meta, 'drawsize'))
		end
		if serving >= drawn_end and seq > serving then
			epochs[#epochs + 1] = {serving, seq - serving, number + 1}
			while #epochs > MAX_EPOCHS do
				table.remove(epochs, 1)
			end
			redis.call('HSET', meta, 'epochs', format_epochs(epochs))
			redis.call('HDEL', meta, 'wseq')
			redis.call('DEL', left)
			record_draw(serving, seq - serving, number + 1, now)
			drawn_end = seq
		end
		end_ = math.max(drawn_end, serving)
	end
	-- The priority lanes, if any, share the step by weight: the general
	-- lane's share goes on as a room without lanes admits (share_lanes).
	local lanes_waiting = num(redis.call('HGET', meta, 'lwait'))
	local n = 0
	if line >= 1 and room > 0 and end_ - serving + lanes_waiting > 0 then
		n = math.min(math.floor(line), room, end_ - serving + lanes_waiting, fans)
	end
	local waiting = end_ > serving or lanes_waiting > 0
	if #lane_weights > 1 then
		-- Only someone the step could let in, in a lane whose weight is
		-- above 0, makes the second count in the pace (memstore's
		-- admittingWaits).
		waiting = false
		for i = 1, #lane_weights do
			if lane_weights[i] > 0 then
				local w = end_ - serving
				if i > 1 then
					local m = redis.call('HMGET', meta, lane_field(i - 1, 'seq'), lane_field(i - 1, 'serv'))
					w = num(m[1]) - num(m[2])
				end
				if w > 0 then
					waiting = true
					break
				end
			end
		end
	end
	local admitted = 0
	if #lane_weights > 1 and n > 0 then
		n, admitted = share_lanes(ARGV[18], lane_weights, end_ - serving, n, now, ARGV[10])
		pending = pending + admitted
		credit = credit - admitted
	end
	if n > 0 then
		local to, got, ghosts = admit_present(end_, judge_from(now, win), n)
		admitted = admitted + got
		if got > 0 then
			redis.call('ZADD', batches, int(serving), batch(serving, got, 0, now, false, to - serving))
			redis.call('HINCRBY', meta, 'admitted', int(got))
			-- The ghosts among the places let in are recorded as lapsed now,
			-- with the batch's grace: a claim from one is told apart from
			-- the live places' and takes none of their slots.
			for _, g in ipairs(ghosts) do
				redis.call('ZADD', lapsed, int(g[1]), lapse(g[1], g[2], now + grace))
			end
			if #ghosts > 0 then
				redis.call('PEXPIRE', lapsed, ARGV[10])
			end
		elseif to > serving then
			-- Ghosts only: their turn passed now; one who comes back within
			-- the return window is a lapsed admission.
			redis.call('ZADD', lapsed, int(serving), lapse(serving, to - serving, now))
			redis.call('PEXPIRE', lapsed, ARGV[10])
		end
		if to - serving > got then
			redis.call('HINCRBY', meta, 'skipped', int(to - serving - got))
		end
		-- The line reached every place up to to: the live ones went in, the
		-- ghosts lost their turn then (and come back as lapsed admissions).
		record_admission(serving, to - serving, now)
		if waitlist and got > 0 then
			-- The units let in for are owed until paid by a fall of the
			-- supply or until the session could have ended:
			-- "w:start:count:fans:units:supply:owed:sample:at".
			local units = math.min(got * wl_units, wl_supply - wl_owed)
			local grants = waitlist_grants(now)
			grants[#grants + 1] = {units, now + grace + session}
			save_waitlist_grants(grants)
			redis.call('HINCRBY', meta, 'wladm', int(got))
			redis.call('RPUSH', history, 'w:' .. int(serving) .. ':' .. int(to - serving) .. ':' .. int(got) .. ':' ..
				int(units) .. ':' .. int(wl_supply) .. ':' .. int(wl_owed + units) .. ':' .. int(wl_sample) .. ':' .. int(now))
		end
		redis.call('HSET', meta, 'serving', int(to))
		redis.call('ZREMRANGEBYSCORE', left, '-inf', '(' .. int(to))
		serving = to
		pending = pending + got
		credit = credit - got
	end
	step_pace(waiting, admitted)
	redis.call('HSET', meta, 'credit', float(credit), 'pending', int(pending))
end

-- Counts the live places from serving on for the nodes: per LIVE_BLOCK
-- places (16 bits each, at offset 2*block in livecounts, so that a count
-- stays where it is as serving moves), and bit by bit for the first
-- HEAD_BLOCKS blocks. Places from young on count as live anyway and are left
-- out. A step counts at most STEP_BLOCKS blocks, so that its cost does not
-- grow with the line: the head every step; then the blocks young has reached
-- since (up to lvto, the end of what is counted, which the nodes take for
-- young until the counting catches up); then, with what is left, the blocks
-- in between in turn from a cursor, so a count far back is at most a few
-- dozen steps old.
local function count_liveness(young)
	local fromblk = math.floor(serving / LIVE_BLOCK)
	local from = fromblk * LIVE_BLOCK
	local lv = redis.call('HMGET', meta, 'lvto', 'lvcur')
	local to, cursor = math.min(num(lv[1]), young), num(lv[2])
	local head, budget = {}, STEP_BLOCKS
	local cached = -1
	-- Counts block b (places below young only) and returns its count packed,
	-- and its bits when keep_bits.
	local function count_block(b, keep_bits)
		local a = b * LIVE_BLOCK
		local blk = math.floor(a / BEAT_BLOCK)
		if blk ~= cached then
			union(now, win, blk)
			cached = blk
		end
		local e = math.min(a + LIVE_BLOCK, young)
		budget = budget - 1
		local packed = struct.pack('>H', count_live(blk, a, e))
		if not keep_bits then
			return packed
		end
		local off = (a - blk * BEAT_BLOCK) / 8
		local bytes = redis.call('GETRANGE', hbtmp, off, off + LIVE_BLOCK / 8 - 1)
		bytes = bytes .. string.rep('\0', LIVE_BLOCK / 8 - #bytes)
		if e < a + LIVE_BLOCK then
			-- Clear the bits from young on.
			local keep = e - a
			local whole = math.floor(keep / 8)
			local rest = keep % 8
			local cut = string.sub(bytes, 1, whole)
			if rest > 0 then
				local c = string.byte(bytes, whole + 1)
				cut = cut .. string.char(bit.band(c, bit.band(bit.lshift(0xFF, 8 - rest), 0xFF)))
			end
			bytes = cut .. string.rep('\0', LIVE_BLOCK / 8 - #cut)
		end
		head[#head + 1] = bytes
		return packed
	end
	-- Counts blocks [first, last) in order, as far as the budget goes, and
	-- stores them; returns the block after the last one counted.
	local function count_run(first, last, bits)
		local out, b = {}, first
		while b < last and budget > 0 do
			out[#out + 1] = count_block(b, bits)
			b = b + 1
		end
		if #out > 0 then
			redis.call('SETRANGE', livecounts, 2 * first, table.concat(out))
		end
		return b
	end
	local youngblk = math.ceil(young / LIVE_BLOCK)
	-- The head, exact.
	local headend = count_run(fromblk, math.min(fromblk + HEAD_BLOCKS, youngblk), true)
	-- The places young reached since the last step (the block holding the
	-- old end is counted again: it was cut at the old young).
	local grow = math.max(headend, math.floor(to / LIVE_BLOCK))
	local grown = count_run(grow, youngblk, false)
	if grown > grow then
		to = math.min(grown * LIVE_BLOCK, young)
	end
	to = math.max(to, math.min(headend * LIVE_BLOCK, young))
	-- The blocks counted before, in turn.
	if cursor < headend or cursor >= grow then
		cursor = headend
	end
	local began = cursor
	cursor = count_run(cursor, grow, false)
	if cursor >= grow then
		cursor = count_run(headend, math.min(began, grow), false)
	end
	redis.call('DEL', hbtmp)
	redis.call('APPEND', livecounts, '') -- the key exists from the first step on, as every key of the room
	if young <= from then
		to = young -- nothing from serving on may be judged
	end
	redis.call('HSET', meta, 'lvfrom', int(from), 'lvyoung', int(to), 'lvto', int(to), 'lvcur', int(cursor))
	redis.call('SET', livehead, table.concat(head))
end

admit()
count_liveness(judge_from(now, win))
return keep_alive()
