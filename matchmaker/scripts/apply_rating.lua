-- apply_rating.lua: store a player's new rating for one finished game, exactly once.
--
-- The caller computed the new rating from the value it read; if that value changed since
-- (another game of the player finished meanwhile) it must recompute and call again.
--
-- KEYS[1]  player         wg:player:{id}          (hash; field rating:<ruleset>)
-- KEYS[2]  rated games    wg:player:{id}:rated    (sorted set: game id -> when)
--
-- ARGV[1]  game id
-- ARGV[2]  rating field ("rating:<ruleset>")
-- ARGV[3]  the field's value the new rating was computed from ("" if it had none)
-- ARGV[4]  the new value
-- ARGV[5]  how many counted game ids to remember
-- ARGV[6]  idle TTL (s) of the player's keys
--
-- Returns 1 when stored, 0 when this game was already counted, -1 when the rating
-- changed meanwhile, -2 when the player no longer exists.

if redis.call("EXISTS", KEYS[1]) == 0 then
  return -2
end
if redis.call("ZSCORE", KEYS[2], ARGV[1]) then
  return 0
end
local current = redis.call("HGET", KEYS[1], ARGV[2]) or ""
if current ~= ARGV[3] then
  return -1
end
local t = redis.call("TIME")
redis.call("HSET", KEYS[1], ARGV[2], ARGV[4])
redis.call("ZADD", KEYS[2], tonumber(t[1]), ARGV[1])
redis.call("ZREMRANGEBYRANK", KEYS[2], 0, -(tonumber(ARGV[5]) + 1))
redis.call("EXPIRE", KEYS[2], tonumber(ARGV[6]))
return 1
