import type { Linter } from "eslint";

/** Globs of the files the determinism rule runs over (eslint.config.js). */
export declare const WORKFLOW_FILES: string[];
declare const config: Linter.Config[];
export default config;
