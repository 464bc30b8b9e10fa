/** Where Bull Board is served. */
export const BULL_BOARD_PATH = "/admin/queues";
/** The board's sign-in page (GET) and form target (POST). */
export const SIGN_IN_PATH = "/admin/sign-in";
/** The board's sign-out page (GET) and form target (POST). */
export const SIGN_OUT_PATH = "/admin/sign-out";
