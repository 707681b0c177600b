-- RedeemCode: a fan's try of an access code (waitingroom.CodeKeeper); the
-- same rules as memstore's codes.go.
-- KEYS: the room's, then its codes and uses hashes (see codeadd.lua), then
-- the client network's join_limit key when the try is weighed.
-- ARGV: now (µs), join_limit interval (µs, 0: none), burst, ttl (ms), then
-- the code's IDs under each key of the room's ring, the current key's first.
-- Returns {status, wait (µs), lane, id}: 0 accepted, 1 wrong, 2 used up, 3 over
-- join_limit; or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local codes, uses, lk = KEYS[ROOM_KEYS + 1], KEYS[ROOM_KEYS + 2], KEYS[ROOM_KEYS + 3]
local now, interval, burst, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
-- Every try, right or wrong, takes from the network's allowance first.
local why, wait = weigh(now, lk, nil, 0, interval, burst)
if why == 1 then
	return {3, wait, '', ''}
end
for i = 5, #ARGV do
	local rec = redis.call('HGET', codes, ARGV[i])
	if rec then
		local comma = string.find(rec, ',', 1, true)
		local most, lane = tonumber(string.sub(rec, 1, comma - 1)), string.sub(rec, comma + 1)
		if num(redis.call('HGET', uses, ARGV[i])) >= most then
			return {2, 0, '', ''}
		end
		redis.call('HINCRBY', uses, ARGV[i], 1)
		redis.call('PEXPIRE', uses, ttl)
		redis.call('PEXPIRE', codes, ttl)
		return {0, 0, lane, ARGV[i]}
	end
end
return {1, 0, '', ''}
