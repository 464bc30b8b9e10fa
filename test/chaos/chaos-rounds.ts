/**
 * Rounds of a chaos test: 1 by default (the short form `npm test` runs), `CHAOS_ROUNDS` (an
 * integer ≥ 1) for the longer form, e.g. `CHAOS_ROUNDS=20 npx vitest run test/chaos`.
 */
export function chaosRounds(defaultRounds = 1): number {
  const raw = process.env.CHAOS_ROUNDS;
  if (raw === undefined || raw === "") return defaultRounds;
  const rounds = Number(raw);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`CHAOS_ROUNDS must be an integer ≥ 1, got ${raw}`);
  return rounds;
}

/** A test timeout that grows with the rounds: `perRoundMs` each, plus `baseMs`. */
export function chaosTimeout(rounds: number, perRoundMs: number, baseMs = 30_000): number {
  return baseMs + rounds * perRoundMs;
}
