-- queue_join.lua: put a ticket in a quick-match queue.
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
-- ARGV[2]  rating
-- ARGV[3]  seat JSON {"p": player, "n": name, "rt": rating text (rating, deviation, volatility)}
-- ARGV[4]  queue config JSON
-- ARGV[5]  liveness (ms): the ticket is dropped unless its stream renews it within this time
-- ARGV[6]  TTL (s) of the queue's keys
--
-- Returns the join time (ms).

local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("ZADD", KEYS[1], tonumber(ARGV[2]), ARGV[1])
redis.call("ZADD", KEYS[2], now, ARGV[1])
-- The arrival number orders the queue: join times tie when two joins share a millisecond.
redis.call("ZADD", KEYS[8], redis.call("INCR", KEYS[9]), ARGV[1])
redis.call("ZADD", KEYS[3], now + tonumber(ARGV[5]), ARGV[1])
redis.call("HSET", KEYS[4], ARGV[1], ARGV[3])
redis.call("SET", KEYS[7], ARGV[4])
local ttl = tonumber(ARGV[6])
for i = 1, #KEYS do
  redis.call("EXPIRE", KEYS[i], ttl)
end
return now
