-- Supply: records a report of what is left to sell (waitingroom/supply.go) as
-- the room's next sample, with its claims, live sessions and places waiting,
-- unless the last sample is dated after it (the latest report wins). The
-- latest MaxSupplyTail samples are kept in the meta hash's 'supply' field,
-- "n:units:at:claimed:active:waiting" joined by ',', oldest first, for the
-- snapshot; each is appended to the history as
-- "s:n:units:claimed:active:waiting:at".
-- ARGV: units, now (µs), ttl (ms), samples kept
-- Returns {sample, 1 when recorded / 0 when stale}, or nil when the room is
-- unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local units, now = tonumber(ARGV[1]), tonumber(ARGV[2])
expire_sessions(now)
local tail = redis.call('HGET', meta, 'supply') or ''
local samples = {}
for part in string.gmatch(tail, '[^,]+') do
	samples[#samples + 1] = part
end
local n = 0
if #samples == 0 then
	-- The first report since the room was created, which took up a
	-- waitlist's debt from before a loss: no more can be owed than is left.
	local _, owed = waitlist_grants(now)
	if owed > units then
		pay_waitlist(owed - units)
	end
end
if #samples > 0 then
	local last = samples[#samples]
	local ln, lat = string.match(last, '^(%d+):%d+:(%-?%d+):')
	if tonumber(lat) > now then
		return {last, 0}
	end
	n = tonumber(ln)
	local lunits = tonumber(string.match(last, '^%d+:(%d+):'))
	if units < lunits then
		-- A fall pays what the waitlist's fans were let in for.
		pay_waitlist(lunits - units)
	end
end
n = n + 1
local c = redis.call('HMGET', meta, 'claimed', 'seq', 'serving')
local claimed, seq, serving = num(c[1]), num(c[2]), num(c[3])
local active = redis.call('ZCARD', live)
local waiting = math.max(0, seq - serving)
local s = int(n) .. ':' .. int(units) .. ':' .. int(now) .. ':' .. int(claimed) .. ':' .. int(active) .. ':' .. int(waiting)
samples[#samples + 1] = s
local keep = tonumber(ARGV[4])
while #samples > keep do
	table.remove(samples, 1)
end
redis.call('HSET', meta, 'supply', table.concat(samples, ','))
redis.call('RPUSH', history, 's:' .. int(n) .. ':' .. int(units) .. ':' .. int(claimed) .. ':' .. int(active) .. ':' ..
	int(waiting) .. ':' .. int(now))
redis.call('PEXPIRE', history, ARGV[3])
return {s, 1}
