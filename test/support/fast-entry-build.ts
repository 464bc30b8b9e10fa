import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build, type OutputFile, type Plugin } from "esbuild";
import { FAST_ENTRIES } from "./fast-entries.js";
import { repoRoot } from "./processes.js";

/**
 * Builds the entry bundle of test/support/fast-entry.ts. It lives under node_modules/.cache, so
 * the bare imports it leaves to Node resolve to this checkout's node_modules, in a directory named
 * by a hash of its content: a rebuild of unchanged sources reuses it, and concurrent runs of other
 * sources never overwrite each other's files.
 */

const CACHE_DIRECTORY = path.join(repoRoot, "node_modules", ".cache", "tenor-fast-entry");

/** Bundles no run has used for this long are removed (a run of the whole suite takes under one hour). */
const STALE_AFTER_MS = 6 * 60 * 60 * 1000;

/** Builds (or reuses) the bundle of every fast entry; resolves with its absolute directory. */
export async function buildFastEntries(): Promise<string> {
  // Built as if into a sibling of the final directory: the source maps' relative paths then hold.
  const staging = path.join(CACHE_DIRECTORY, "staging");
  const result = await build({
    absWorkingDir: repoRoot,
    entryPoints: [...FAST_ENTRIES],
    outdir: staging,
    outbase: repoRoot,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    // Errors and refusals take their name from their class (src/errors/tenor-error.ts): keep names.
    keepNames: true,
    sourcemap: "linked",
    write: false,
    logLevel: "silent",
    plugins: [keepSourceModuleUrls()],
  });
  const directory = path.join(CACHE_DIRECTORY, contentHash(result.outputFiles, staging));
  if (existsSync(directory)) {
    const now = new Date();
    await utimes(directory, now, now);
  } else {
    await writeAtomically(result.outputFiles, staging, directory);
  }
  await removeStaleBundles(directory);
  return directory;
}

/**
 * Sources that find files next to themselves (prisma/ from src/store/migrations/paths.ts, the
 * generated Prisma client, createRequire in telemetry) read `import.meta.url`, which in a bundle
 * would name the chunk. Each source file's own URL is written in its place, so every such lookup
 * resolves exactly as it does when the file runs through tsx.
 */
function keepSourceModuleUrls(): Plugin {
  return {
    name: "keep-source-module-urls",
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        const source = await readFile(args.path, "utf8");
        const values: Record<string, string> = {
          url: pathToFileURL(args.path).href,
          filename: args.path,
          dirname: path.dirname(args.path),
        };
        return {
          contents: source.replace(/\bimport\.meta\.(url|filename|dirname)\b/g, (_, key: string) =>
            JSON.stringify(values[key]),
          ),
          loader: /\.[cm]?ts$/.test(args.path) ? "ts" : "js",
        };
      });
    },
  };
}

function contentHash(files: readonly OutputFile[], staging: string): string {
  const hash = createHash("sha256");
  for (const file of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
    hash.update(path.relative(staging, file.path)).update("\0").update(file.contents).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** Writes into a private directory and renames it into place, so no reader sees half a bundle. */
async function writeAtomically(files: readonly OutputFile[], staging: string, directory: string) {
  const temporary = `${directory}.tmp-${randomBytes(4).toString("hex")}`;
  for (const file of files) {
    const target = path.join(temporary, path.relative(staging, file.path));
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, file.contents);
  }
  try {
    await rename(temporary, directory);
  } catch (error) {
    // A concurrent run renamed the same content into place first: theirs is as good as ours.
    await rm(temporary, { recursive: true, force: true });
    if (!existsSync(directory)) throw error;
  }
}

async function removeStaleBundles(current: string): Promise<void> {
  for (const name of await readdir(CACHE_DIRECTORY)) {
    const entry = path.join(CACHE_DIRECTORY, name);
    if (entry === current) continue;
    const { mtimeMs } = await stat(entry).catch(() => ({ mtimeMs: Date.now() }));
    if (Date.now() - mtimeMs > STALE_AFTER_MS) await rm(entry, { recursive: true, force: true });
  }
}
