/**
 * Lua shared by the keyed-lane scripts (prepended to each). Redis runs one script at a time, so
 * everything a script does to a lane's pending set, its in-flight set, the space's flight index,
 * the item records and the ready list happens atomically: no other client sees a half-moved item.
 *
 * Layout under `base` = `<prefix>:keyed:<space>` (docs/keyed.md):
 *   base:items      hash  item id -> "<limit>|<reply channel>|<lane>"
 *   base:q:<lane>   zset  pending item ids, score = PostgreSQL seq (arrival order)
 *   base:f:<lane>   set   in-flight item ids (never more than the head item's limit)
 *   base:flight     zset  every in-flight id; score = lease deadline (ms), +inf while it waits
 *                         in the ready list unclaimed (dispatch mode), or promotion time (gate mode)
 *   base:ready      list  in-flight ids no runner has claimed yet, oldest first (dispatch mode)
 *   base:meta       hash  exists once the space is whole (rebuilt from PostgreSQL after a loss)
 * Lane keys are built from `base` inside the scripts; with a hash-tagged prefix they share a slot.
 */
export const LANE_LIB = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function parse(rec)
  local limit, channel, lane = string.match(rec, '^(%d+)|([^|]*)|(.*)$')
  return tonumber(limit), channel, lane
end

-- Moves the lane's oldest pending items into flight while it holds fewer than the head's limit.
local function promote(base, items, flight, ready, dispatch, lane, now, promoted)
  local q = base .. ':q:' .. lane
  local f = base .. ':f:' .. lane
  while true do
    local head = redis.call('ZRANGE', q, 0, 0)[1]
    if not head then return end
    local rec = redis.call('HGET', items, head)
    if not rec then
      redis.call('ZREM', q, head)
    else
      local limit = parse(rec)
      if redis.call('SCARD', f) >= limit then return end
      redis.call('ZREM', q, head)
      redis.call('SADD', f, head)
      if dispatch then
        redis.call('ZADD', flight, '+inf', head)
        redis.call('RPUSH', ready, head)
      else
        redis.call('ZADD', flight, now, head)
      end
      promoted[#promoted + 1] = head
    end
  end
end
`;
