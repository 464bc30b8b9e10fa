import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

/**
 * Path of the anvil binary of this platform's `@foundry-rs/anvil-<os>-<arch>` package (a dev
 * dependency that carries the binary: nothing is downloaded at install or run time).
 */
export function anvilBinary(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const manifest = require.resolve(`${pkg}/package.json`);
  return path.join(path.dirname(manifest), "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
}
