import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import * as bindings from "@prisma/schema-engine-wasm/schema_engine_bg";

/** The wasm-bindgen glue of `@prisma/schema-engine-wasm` with the engine class and its types. */
export type SchemaEngineBindings = typeof bindings;

/** What wasm-bindgen's generated start function needs from the instance's exports. */
interface EngineExports {
  __wbindgen_start(): void;
}

/**
 * The part of the global WebAssembly API used here. The project compiles with `lib: ES2023` and
 * no DOM types, where TypeScript declares WebAssembly only as a namespace of types.
 */
interface WebAssemblyApi {
  instantiate(bytes: Uint8Array, imports: Record<string, object>): Promise<{ instance: { exports: object } }>;
}

let loading: Promise<SchemaEngineBindings> | undefined;

/**
 * Loads Prisma's schema engine (WebAssembly) once per process and returns its bindings.
 *
 * The package's own entry point imports the `.wasm` file as an ES module, which Node 20 only allows
 * with `--experimental-wasm-modules`, a flag that every role process, test worker and CLI would
 * then need. Instead this instantiates the same `.wasm` file from its bytes with the same glue
 * module, which is exactly what the entry point does, and works in any Node 20 process.
 *
 * @throws Error when the package is missing or its wasm file cannot be read or compiled.
 */
export function loadSchemaEngineBindings(): Promise<SchemaEngineBindings> {
  loading ??= instantiate().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function instantiate(): Promise<SchemaEngineBindings> {
  const require = createRequire(import.meta.url);
  const gluePath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
  const bytes = await readFile(gluePath.replace(/\.js$/, ".wasm"));
  // The wasm file imports every glue function from the module "./schema_engine_bg.js".
  const { WebAssembly } = globalThis as unknown as { WebAssembly: WebAssemblyApi };
  const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": bindings });
  bindings.__wbg_set_wasm(instance.exports);
  (instance.exports as unknown as EngineExports).__wbindgen_start();
  return bindings;
}
