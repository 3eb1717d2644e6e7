-- queue_status.lua: renew a waiting ticket and say where it stands.
--
-- KEYS[1]  ratings   wg:queue:{q}:ratings   (sorted set: ticket -> rating)
-- KEYS[2]  joined    wg:queue:{q}:joined    (sorted set: ticket -> join time, ms)
-- KEYS[3]  alive     wg:queue:{q}:alive     (sorted set: ticket -> alive until, ms)
-- KEYS[4]  tickets   wg:queue:{q}:tickets   (hash: ticket -> JSON seat of the player)
-- KEYS[5]  matches   wg:queue:{q}:matches   (hash: ticket -> JSON match)
-- KEYS[6]  matched   wg:queue:{q}:matched   (sorted set: ticket -> match time, ms)
-- KEYS[7]  config    wg:queue:{q}:config    (string: JSON of the games to create)
-- KEYS[8]  arrivals  wg:queue:{q}:arrivals  (sorted set: ticket -> arrival number: the order)
-- KEYS[9]  sequence  wg:queue:{q}:sequence  (string: last arrival number given out)
--
-- ARGV[1]  ticket
-- ARGV[2]  liveness (ms) to renew the ticket by
--
-- Returns {"matched", match JSON}, {"waiting", position (1 = first to arrive),
-- tickets waiting, join time (ms), now (ms)} or {"gone"} (left, or dropped).

local match = redis.call("HGET", KEYS[5], ARGV[1])
if match then
  return {"matched", match}
end
local joined = redis.call("ZSCORE", KEYS[2], ARGV[1])
if not joined then
  return {"gone"}
end
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("ZADD", KEYS[3], "XX", now + tonumber(ARGV[2]), ARGV[1])
local rank = redis.call("ZRANK", KEYS[8], ARGV[1])
if not rank then
  -- Joined through a replica older than arrival numbers: it queues from now on.
  redis.call("ZADD", KEYS[8], redis.call("INCR", KEYS[9]), ARGV[1])
  rank = redis.call("ZRANK", KEYS[8], ARGV[1])
end
local waiting = redis.call("ZCARD", KEYS[2])
return {"waiting", rank + 1, waiting, joined, tostring(now)}
