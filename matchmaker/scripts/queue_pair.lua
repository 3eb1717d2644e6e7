-- queue_pair.lua: pair waiting tickets of one queue, atomically.
--
-- Tickets in arrival order (oldest first; arrival numbers never tie, join times can),
-- each is paired with the waiting ticket nearest in rating within its rating window,
-- which widens with waiting time: base + growth * seconds waited, at most max. A paired
-- ticket leaves the queue in the same step, so no ticket is ever paired twice, however
-- many replicas run this at once. Tickets whose stream stopped renewing them are dropped
-- first; matches nobody claimed within the match TTL too.
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
-- ARGV[1]  window base (rating points)
-- ARGV[2]  window growth (rating points per second waited)
-- ARGV[3]  window maximum
-- ARGV[4]  match TTL (ms): unclaimed matches older than this are dropped
-- ARGV[5]  TTL (s) of the queue's keys
-- ARGV[6]  G, the number of fresh game ids that follow (at most G pairs are made)
-- ARGV[7 .. 6+G]  game ids
-- ARGV[7+G]       G characters "0"/"1": for pair i, "1" gives the first side to the newer
--                 ticket, "0" to the older one
--
-- Returns the match JSONs made:
-- {"g": game id, "t": ms, "tickets": [a, b], "seats": [ticket JSON of side 1, of side 2]}.

local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local base = tonumber(ARGV[1])
local growth = tonumber(ARGV[2])
local widest = tonumber(ARGV[3])
local g = tonumber(ARGV[6])
local coins = ARGV[7 + g]

local old = redis.call("ZRANGEBYSCORE", KEYS[6], "-inf", now - tonumber(ARGV[4]))
for _, ticket in ipairs(old) do
  redis.call("HDEL", KEYS[5], ticket)
  redis.call("ZREM", KEYS[6], ticket)
end

local function take(ticket)
  redis.call("ZREM", KEYS[1], ticket)
  redis.call("ZREM", KEYS[2], ticket)
  redis.call("ZREM", KEYS[3], ticket)
  redis.call("ZREM", KEYS[8], ticket)
  redis.call("HDEL", KEYS[4], ticket)
end

for _, ticket in ipairs(redis.call("ZRANGEBYSCORE", KEYS[3], "-inf", "(" .. now)) do
  take(ticket)  -- a ticket whose stream stopped renewing it
end

local out = {}
local made = 0
-- Oldest first, a chunk at a time: tickets tried and left unpaired stay at the front of
-- `arrivals` (paired ones leave it), so the next chunk starts after them.
local kept = 0
local kept_set = {}
local chunk = 256
while made < g do
  local order = redis.call("ZRANGE", KEYS[8], kept, kept + chunk - 1)
  if #order == 0 then
    break
  end
  for _, ticket in ipairs(order) do
    if made >= g then
      break
    end
    local rating = tonumber(redis.call("ZSCORE", KEYS[1], ticket))
    if not rating then
      -- Paired earlier in this call, or taken out by a replica older than arrival
      -- numbers (which left the arrival behind).
      redis.call("ZREM", KEYS[8], ticket)
    else
      local joined = tonumber(redis.call("ZSCORE", KEYS[2], ticket))
      local window = math.min(widest, base + growth * (now - joined) / 1000)
      local best, best_gap = nil, nil
      local near = {
        redis.call("ZREVRANGEBYSCORE", KEYS[1], rating, rating - window, "WITHSCORES", "LIMIT", 0, 2),
        redis.call("ZRANGEBYSCORE", KEYS[1], rating, rating + window, "WITHSCORES", "LIMIT", 0, 2),
      }
      for _, list in ipairs(near) do
        for j = 1, #list, 2 do
          local other = list[j]
          local gap = math.abs(tonumber(list[j + 1]) - rating)
          if other ~= ticket and (best_gap == nil or gap < best_gap) then
            best, best_gap = other, gap
          end
        end
      end
      if best then
        made = made + 1
        local first, second = ticket, best
        if string.sub(coins, made, made) == "1" then
          first, second = best, ticket
        end
        local match = '{"g":"' .. ARGV[6 + made] .. '","t":' .. now
          .. ',"tickets":["' .. first .. '","' .. second .. '"],"seats":['
          .. redis.call("HGET", KEYS[4], first) .. ',' .. redis.call("HGET", KEYS[4], second) .. ']}'
        for _, member in ipairs({first, second}) do
          take(member)
          redis.call("HSET", KEYS[5], member, match)
          redis.call("ZADD", KEYS[6], now, member)
        end
        out[#out + 1] = match
        if kept_set[best] then
          -- A ticket left unpaired earlier just found its partner: it leaves the front.
          kept = kept - 1
        end
      else
        kept = kept + 1
        kept_set[ticket] = true
      end
    end
  end
end

if made > 0 then
  local ttl = tonumber(ARGV[5])
  for i = 1, #KEYS do
    redis.call("EXPIRE", KEYS[i], ttl)
  end
end
return out
