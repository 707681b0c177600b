-- JoinAccount: one place per account. The last key is the account's bucket, a hash
-- from the account's 8-byte key to its place: the visitor's 16 raw bytes, then
-- the order key (6 bytes) and the second it was taken (5 bytes), big-endian.
-- Small hashes stay listpack-encoded, which is what keeps an account at
-- about 40 bytes (see accountBuckets in account.go).
-- ARGV: now (µs), open (0/1), cap, session, retention (µs), ttl (ms),
-- account, visitor, visitor's raw bytes, spent (key + 1, 0: none),
-- now (s), retention (s), then what a new place is weighed by (see weigh in
-- lib.lua): join_limit's interval (µs, 0: none) and burst, the network's and
-- the seed's indices into KEYS (0: none), and the seed's time (µs), and the
-- phase pre-queue open (see settle_phases in lib.lua).
-- Returns {existing (0/1), key, admitted (0/1), session end, visitor's raw
-- bytes, joined (s)}, {refusal, wait (µs)} when a new place was refused, -1
-- while the room settles after a loss, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local now = tonumber(ARGV[1])
if now < num(redis.call('HGET', meta, 'settle')) then
	return -1
end
local bucket, account = KEYS[ROOM_KEYS + 1], ARGV[7]
local nows, spent = tonumber(ARGV[11]), tonumber(ARGV[10])
local cur = redis.call('HGET', bucket, account)
if cur and #cur == 27 then
	local key, joined = struct.unpack('>I6I5', cur, 17)
	-- A place stays the account's for a ticket's lifetime from when it was
	-- taken, until the account's ticket for it is spent.
	if nows - joined < tonumber(ARGV[12]) and key + 1 ~= spent then
		return {1, key, 0, 0, string.sub(cur, 1, 16), joined}
	end
end
local why, wait = weigh(now, KEYS[tonumber(ARGV[15])], KEYS[tonumber(ARGV[16])], tonumber(ARGV[17]), tonumber(ARGV[13]), tonumber(ARGV[14]))
if why ~= 0 then
	return {why, wait}
end
local join_open = settle_phases(now, ARGV[18] or '') == nil and ARGV[2] == '1'
local key, admitted, exp = join_visitors(now, join_open, tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], 1, function() return ARGV[8] end)
redis.call('HSET', bucket, account, ARGV[9] .. struct.pack('>I6I5', key, nows))
redis.call('PEXPIRE', bucket, ARGV[6])
return {0, key, admitted, exp, ARGV[9], nows}
