/** JSON parameters go as text so `pg` never guesses (arrays would become PostgreSQL arrays). */
export function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
