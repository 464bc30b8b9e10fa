/** One implementation of a free port for every test: the process fixture's. */
export { freePort } from "./processes.js";
