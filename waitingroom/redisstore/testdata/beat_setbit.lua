-- The heartbeat script as it was before a Beat was split into bounded calls:
-- one SETBIT per place, every place of a node's second in one call.
-- BenchmarkBeatScript runs it as the baseline of the same run.
-- Beat: record that places were seen waiting and sessions were used, at now.
-- ARGV: now (µs), window (µs, 0: places are not tracked), number of places,
-- places..., visitors...
-- Returns 1, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local now, win, np = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
expire_sessions(now)
if win > 0 and np > 0 then
	local m = redis.call('HMGET', meta, 'serving', 'seq')
	local serving, seq = num(m[1]), num(m[2])
	local idx = math.floor(now / win)
	-- A window is looked at while it is among the last WINDOWS; then it goes
	-- (relative to the caller's clock, as every time here).
	local expire_in = int(math.floor(((idx + WINDOWS) * win - now) / 1000))
	local ready = {}
	for i = 4, 3 + np do
		local p = tonumber(ARGV[i])
		if p >= serving and p < seq then
			local blk = math.floor(p / BEAT_BLOCK)
			local k = window_key(idx, blk)
			if not ready[blk] then
				ready[blk] = true
				if redis.call('EXISTS', k) == 0 then
					-- Whole at once: a bitmap grown bit by bit is given
					-- twice the room it needs.
					redis.call('SETBIT', k, BEAT_BLOCK - 1, 0)
					redis.call('PEXPIRE', k, expire_in)
				end
			end
			redis.call('SETBIT', k, p - blk * BEAT_BLOCK, 1)
		end
	end
end
for i = 4 + np, #ARGV do
	if redis.call('ZSCORE', live, ARGV[i]) then
		redis.call('ZADD', seen, 'GT', int(now), ARGV[i])
	end
end
return 1
