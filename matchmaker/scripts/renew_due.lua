-- renew_due.lua: extend a sweeper's claim on a game while its work runs (its heartbeat).
--
-- Leases are short, so the games of a replica that dies are taken over within seconds;
-- the replica that works on a game renews its lease every third of it.
--
-- KEYS[1]  due index shard    wg:{due:<n>}   (sorted set: game id -> when, ms)
--
-- ARGV[1]  game id
-- ARGV[2]  the lease score the sweeper holds
-- ARGV[3]  lease (ms)
--
-- Returns the new lease score, or 0 when the score is no longer the sweeper's (a writer
-- made the game due sooner meanwhile, or the lease ran out and another sweeper claimed it).

local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then
  return 0
end
local t = redis.call("TIME")
local lease = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[3])
redis.call("ZADD", KEYS[1], lease, ARGV[1])
return lease
