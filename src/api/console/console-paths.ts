/** Where the console is served, and its sign-in and sign-out pages. */
export const CONSOLE_PATHS = {
  home: "/console",
  runners: "/console/runners",
  /** The organisation's bulk operations (src/api/console/operations-pages.ts). */
  operations: "/console/operations",
  /** The viewer's time-zone picker (src/api/console/console-zone.ts). */
  timeZone: "/console/time-zone",
  signIn: "/console/sign-in",
  signOut: "/console/sign-out",
  /** The platform's pages start here: where a platform key's session lands. */
  schedules: "/console/schedules",
} as const;
