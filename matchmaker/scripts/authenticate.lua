-- authenticate.lua: check a player's token, take one request from its rate-limit bucket,
-- and keep its keys alive (players expire after a period of idleness: a short one for
-- guests who have never played a game, a long one for players who have).
--
-- KEYS[1]  token          wg:player:{id}:token:<hash>   (string: token id)
-- KEYS[2]  player         wg:player:{id}                (hash)
-- KEYS[3]  tokens         wg:player:{id}:tokens         (hash: token id -> hash)
-- KEYS[4]  bucket         wg:player:{id}:bucket         (hash: tokens, ms)
-- KEYS[5]  rated games    wg:player:{id}:rated          (sorted set)
-- KEYS[6]  open games     wg:player:{id}:games          (sorted set)
--
-- ARGV[1]  idle TTL (s) of the keys of a player who has played (field "played" set)
-- ARGV[2]  refill rate (requests per second); 0 = no limit
-- ARGV[3]  bucket size (burst)
-- ARGV[4]  cost of this request
-- ARGV[5]  idle TTL (s) of the keys of a guest who has not played yet
--
-- Returns {0} for an unknown or revoked token, {1, token id} when allowed,
-- {2, token id, retry after (ms)} beyond the rate limit.

local token_id = redis.call("GET", KEYS[1])
if not token_id then
  return {0}
end
local ttl = tonumber(ARGV[5])
if redis.call("HEXISTS", KEYS[2], "played") == 1 then
  ttl = tonumber(ARGV[1])
end
redis.call("EXPIRE", KEYS[1], ttl)
redis.call("EXPIRE", KEYS[2], ttl)
redis.call("EXPIRE", KEYS[3], ttl)
redis.call("EXPIRE", KEYS[5], ttl)
redis.call("EXPIRE", KEYS[6], ttl)

local rate = tonumber(ARGV[2])
if rate <= 0 then
  return {1, token_id}
end
local burst = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local bucket = redis.call("HMGET", KEYS[4], "tokens", "at")
local tokens = tonumber(bucket[1]) or burst
local at = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
if tokens < cost then
  return {2, token_id, tostring(math.ceil((cost - tokens) * 1000 / rate))}
end
redis.call("HSET", KEYS[4], "tokens", tostring(tokens - cost), "at", now)
redis.call("PEXPIRE", KEYS[4], math.ceil(burst * 1000 / rate) + 1000)
return {1, token_id}
