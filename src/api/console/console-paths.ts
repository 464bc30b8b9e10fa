/** Where the console is served, and its sign-in and sign-out pages. */
export const CONSOLE_PATHS = {
  home: "/console",
  runners: "/console/runners",
  signIn: "/console/sign-in",
  signOut: "/console/sign-out",
  /** The platform's pages start here: where a platform key's session lands. */
  schedules: "/console/schedules",
} as const;
