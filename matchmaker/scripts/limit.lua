-- limit.lua: one token bucket (a rate limit): take `cost` tokens if at least `need` are there.
--
-- Every limit of the matchmaker but the per-call one of `authenticate.lua` is such a bucket,
-- one key each (its own hash tag), so several limits on one request are several calls.
--
-- KEYS[1]  bucket     wg:limit:{...} or wg:player:{id}:guesses   (hash: tokens, at)
--
-- ARGV[1]  refill rate (tokens per second; > 0)
-- ARGV[2]  bucket size (burst)
-- ARGV[3]  tokens that must be there for the request to pass (0: always passes)
-- ARGV[4]  tokens to take when it passes (0: only look); the bucket may go into debt down
--          to minus its size, so requests that all looked at once still pay for themselves
--
-- Returns {1, 0} when the request passes, {0, retry after (ms)} when it does not.

local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local bucket = redis.call("HMGET", KEYS[1], "tokens", "at")
local tokens = tonumber(bucket[1]) or burst
local at = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
if tokens < need then
  return {0, math.ceil((need - tokens) * 1000 / rate)}
end
if cost > 0 then
  tokens = math.max(-burst, tokens - cost)
  redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "at", now)
  redis.call("PEXPIRE", KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
end
return {1, 0}
