/** Stable error codes of the Redis transport; never reworded once shipped. */
export const TRANSPORT_ERRORS = {
  /** Redis INFO memory did not say which eviction policy it runs. */
  REDIS_POLICY_UNKNOWN: "REDIS_POLICY_UNKNOWN",
  /** Redis may evict keys (maxmemory-policy other than noeviction): queues would lose jobs. */
  REDIS_EVICTION_POLICY: "REDIS_EVICTION_POLICY",
} as const;

export type TransportErrorCode = (typeof TRANSPORT_ERRORS)[keyof typeof TRANSPORT_ERRORS];

declare module "../errors/error-code-registry.js" {
  interface ErrorCodeRegistry {
    transport: TransportErrorCode;
  }
}
