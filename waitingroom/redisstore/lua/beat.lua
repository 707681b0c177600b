-- Beat: record that places were seen waiting and sessions were used, at now.
-- One call carries at most a bounded share of a node's beats (beat.go splits
-- them), so that it holds Redis for a bounded time: its cost is a few commands
-- per heartbeat block and two for all its sessions, never a command per place.
-- ARGV: now (µs), window (µs, 0: places are not tracked), number of blocks nb,
-- then three per block: its number; the byte of the block its bits start at,
-- and the bits (bit 7 of their first byte is the place at that byte's first
-- bit), or -1 and the places' offsets in the block, two bytes each, big
-- endian (a block with few places seen, far apart); then the visitors.
-- Returns 1, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local now, win, nb = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
expire_sessions(now)

-- The bits of places in [lo, hi) among bits, whose first bit is place a:
-- returns them from the byte holding lo's bit on, with the offset of that
-- byte in bits; nil when none of bits is in [lo, hi). Only a block holding
-- serving or the end of the line is cut: making a string costs Lua time in
-- proportion to its length, so the others go to Redis as they came.
local function clip(bits, a, lo, hi)
	local n = 8 * #bits
	lo, hi = math.max(lo - a, 0), math.min(hi - a, n)
	if lo >= hi then
		return nil
	end
	if lo == 0 and hi == n then
		return bits, 0
	end
	local b0, b1 = math.floor(lo / 8), math.floor((hi - 1) / 8)
	local head = bit.rshift(0xFF, lo % 8)
	local tail = bit.band(bit.lshift(0xFF, 7 - (hi - 1) % 8), 0xFF)
	if b0 == b1 then
		local c = bit.band(string.byte(bits, b0 + 1), head, tail)
		if c == 0 then
			return nil
		end
		return string.char(c), b0
	end
	return string.char(bit.band(string.byte(bits, b0 + 1), head))
		.. string.sub(bits, b0 + 2, b1)
		.. string.char(bit.band(string.byte(bits, b1 + 1), tail)), b0
end

if win > 0 and nb > 0 then
	local m = redis.call('HMGET', meta, 'serving', 'seq')
	local serving, seq = num(m[1]), num(m[2])
	local idx = math.floor(now / win)
	-- A window is looked at while it is among the last WINDOWS; then it goes
	-- (relative to the caller's clock, as every time here).
	local expire_in = int(math.floor(((idx + WINDOWS) * win - now) / 1000))
	-- Sets in the scratch key the bits of the offsets in s (two bytes each)
	-- of the places in [serving, seq); false when there is none.
	local function set_offsets(s, base)
		local args, n = {}, 0
		for j = 1, #s, 2 do
			local hi, lo = string.byte(s, j, j + 1)
			local o = hi * 256 + lo
			if base + o >= serving and base + o < seq then
				args[n + 1], args[n + 2], args[n + 3], args[n + 4] = 'SET', 'u1', o, 1
				n = n + 4
			end
		end
		if n == 0 then
			return false
		end
		redis.call('BITFIELD', hbtmp, unpack(args))
		return true
	end
	for i = 4, 1 + 3 * nb, 3 do
		local blk, first = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
		local base = blk * BEAT_BLOCK
		-- Only places still waiting: from serving on, below the keys handed
		-- out. The bits go into the scratch key at their offset (SETRANGE
		-- pads it with zeros).
		local any
		if first < 0 then
			any = set_offsets(ARGV[i + 2], base)
		else
			local bits, off = clip(ARGV[i + 2], base + 8 * first, serving, seq)
			if bits then
				redis.call('SETRANGE', hbtmp, first + off, bits)
				any = true
			end
		end
		if any then
			-- OR them into the window with BITOP: four commands a block,
			-- however many of its places were seen. BITOP sizes the window's
			-- bitmap to its last byte with a bit, exactly (SETBIT would leave
			-- room to grow), so a block costs what it covers, and a block no
			-- poller reached costs nothing. BITOP drops the key's expiry: it
			-- is set again each time.
			local k = window_key(idx, blk)
			redis.call('BITOP', 'OR', k, k, hbtmp)
			redis.call('DEL', hbtmp)
			-- Places whose holders left the line are never live again
			-- (a copy of the ticket may still be looking): one command
			-- a block, and one per such place.
			for _, s in ipairs(redis.call('ZRANGEBYSCORE', left, base, base + BEAT_BLOCK - 1)) do
				local off = tonumber(s) - base
				if off < 8 * redis.call('STRLEN', k) then
					redis.call('SETBIT', k, off, 0)
				end
			end
			redis.call('PEXPIRE', k, expire_in)
		end
	end
end

-- Sessions: only live ones are marked, with two commands for all of them.
local nv = #ARGV - 3 - 3 * nb
if nv > 0 then
	local visitors = {unpack(ARGV, 4 + 3 * nb)}
	local ends = redis.call('ZMSCORE', live, unpack(visitors))
	local marks = {}
	for i, v in ipairs(visitors) do
		if ends[i] then
			marks[#marks + 1] = int(now)
			marks[#marks + 1] = v
		end
	end
	if #marks > 0 then
		redis.call('ZADD', seen, 'GT', unpack(marks))
	end
end
return 1
