import { LANE_LIB } from "./lane-lib.js";

/**
 * Finishes items: frees each one's slot (or drops it from its pending set) and promotes the next
 * of its lane, atomically, so a lane can neither exceed its limit nor stall with a free slot.
 * Releasing an unknown id does nothing, so a repeated release (a redelivered command, a repair
 * racing a runner) can never free a second slot.
 *
 * KEYS: items, flight, ready. ARGV: base, dispatch ('1' | '0'), ids...
 * Returns the promoted ids (already pushed to ready in dispatch mode).
 */
export const RELEASE_LUA = `${LANE_LIB}
local items, flight, ready = KEYS[1], KEYS[2], KEYS[3]
local base, dispatch = ARGV[1], ARGV[2] == '1'
local now = now_ms()
local promoted = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local rec = redis.call('HGET', items, id)
  if rec then
    local _, _, lane = parse(rec)
    redis.call('HDEL', items, id)
    redis.call('ZREM', flight, id)
    if redis.call('SREM', base .. ':f:' .. lane, id) == 0 then redis.call('ZREM', base .. ':q:' .. lane, id) end
    promote(base, items, flight, ready, dispatch, lane, now, promoted)
  end
end
return promoted
`;
