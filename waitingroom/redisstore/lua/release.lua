-- Release: end a visitor's session early and record the pass as revoked.
-- ARGV: visitor, pass id ('' when nothing is to be revoked), pass expiry (µs), ttl (ms),
-- the pass's end in seconds ('' for whatever session is live)
if redis.call('EXISTS', meta) == 0 then
	return false
end
local ends = redis.call('ZSCORE', live, ARGV[1])
if ends then
	-- Only the pass's own session: one of an earlier session of the
	-- visitor (a requeued one) ends nothing of the one they hold now.
	if pass_of(ends, ARGV[5]) then
		redis.call('ZREM', live, ARGV[1])
		redis.call('ZREM', seen, ARGV[1])
	end
elseif ARGV[1] ~= '' then
	-- A session the store lost: one of the held slots stood for it. (A
	-- revocation put back after a loss names no visitor: it ends nothing.)
	release_held()
	redis.call('ZREM', seen, ARGV[1])
end
if ARGV[2] ~= '' then
	-- The cursor orders revocations for nodes that poll "what is new since";
	-- the second index trims them by expiry without a scan.
	local cursor = redis.call('HINCRBY', meta, 'revcur', 1)
	local member = int(cursor) .. ':' .. ARGV[3] .. ':' .. ARGV[2]
	redis.call('ZADD', revoked, int(cursor), member)
	redis.call('ZADD', revokedexp, ARGV[3], member)
	redis.call('PEXPIRE', revoked, ARGV[4])
	redis.call('PEXPIRE', revokedexp, ARGV[4])
end
return 1
