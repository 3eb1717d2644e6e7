-- claim_due.lua: claim the games whose next event is due, for one sweeper.
--
-- A claim moves the game's score a lease ahead, so no other replica's sweeper takes it
-- until the lease runs out; the claimer renews it while it works (`renew_due.lua`), so a
-- replica killed mid-work leaves its claims to the others within one lease.
--
-- KEYS[1]  due index shard    wg:{due:<n>}   (sorted set: game id -> when, ms)
--
-- ARGV[1]  lease (ms)
-- ARGV[2]  most games to claim
--
-- Returns {lease score, game id, game id, ...}; the lease score identifies this claim.

local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = now + tonumber(ARGV[1])
local due = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", now, "LIMIT", 0, tonumber(ARGV[2]))
local out = {tostring(lease)}
for _, member in ipairs(due) do
  redis.call("ZADD", KEYS[1], lease, member)
  out[#out + 1] = member
end
return out
