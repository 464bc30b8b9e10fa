import { LANE_LIB } from "./lane-lib.js";

/**
 * Adds items to their lanes and promotes each touched lane, in one atomic step: an item is either
 * unknown, pending in its lane, or in flight, never between. Known items are left where they are
 * (a redelivered command or a repair pass), only their reply channel is updated.
 *
 * KEYS: items, meta, flight, ready.
 * ARGV: base, dispatch ('1' push promoted ids to ready | '0' return them to the caller),
 *       mode ('live' refuses with LOST while the space is not whole | 'rebuild'),
 *       then per item: id, lane, seq, limit, channel ('' keeps the stored one), state ('p' pending |
 *       'f' already running: rebuild of keyed workflows that had started).
 * Returns {'LOST'} or {'OK', promoted ids...}.
 */
export const ENQUEUE_LUA = `${LANE_LIB}
local items, meta, flight, ready = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base, dispatch, mode = ARGV[1], ARGV[2] == '1', ARGV[3]
if mode == 'live' and redis.call('EXISTS', meta) == 0 then return {'LOST'} end
local now = now_ms()
local touched, seen = {}, {}
for i = 4, #ARGV, 6 do
  local id, lane, seq, limit, channel, state = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  local rec = redis.call('HGET', items, id)
  if rec then
    if channel ~= '' then
      local l, _, ln = parse(rec)
      redis.call('HSET', items, id, l .. '|' .. channel .. '|' .. ln)
    end
  else
    redis.call('HSET', items, id, limit .. '|' .. channel .. '|' .. lane)
    if state == 'f' then
      redis.call('SADD', base .. ':f:' .. lane, id)
      redis.call('ZADD', flight, now, id)
    else
      redis.call('ZADD', base .. ':q:' .. lane, seq, id)
      if not seen[lane] then
        seen[lane] = true
        touched[#touched + 1] = lane
      end
    end
  end
end
local promoted = {'OK'}
for _, lane in ipairs(touched) do promote(base, items, flight, ready, dispatch, lane, now, promoted) end
return promoted
`;
