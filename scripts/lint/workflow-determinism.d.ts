import type { ESLint } from "eslint";

/** The `tenor` ESLint plugin (workflow-determinism.js): its one rule, `workflow-determinism`. */
declare const plugin: ESLint.Plugin;
export default plugin;
