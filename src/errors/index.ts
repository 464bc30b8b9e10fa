export { TenorError, toTenorError } from "./tenor-error.js";
