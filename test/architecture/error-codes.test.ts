import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { exportedCodes, inlineErrorCodes, isCodeModule, stringLiterals } from "./error-code-literals.js";
import { sourceFiles } from "./import-graph.js";

/**
 * Error codes live in their layer's code module (a `*_ERRORS` object and its union, registered
 * with ErrorCodeRegistry); every other file names a code by its constant, so a typo is a compile
 * error and renaming a code is one edit (test/architecture/error-code-literals.ts says precisely
 * what counts as an inline code).
 */

const ROOT = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));
const FILES = sourceFiles(ROOT, ["src", "flows", "workers"]);
const SOURCES = new Map(FILES.map((file) => [file, readFileSync(path.join(ROOT, file), "utf8")]));
const CODE_MODULES = FILES.filter((file) => isCodeModule(SOURCES.get(file) as string));

async function allCodes(): Promise<Set<string>> {
  const codes = new Set<string>();
  for (const file of CODE_MODULES) {
    const moduleExports = (await import(pathToFileURL(path.join(ROOT, file)).href)) as Record<
      string,
      unknown
    >;
    for (const code of exportedCodes(moduleExports)) codes.add(code);
  }
  return codes;
}

describe("error codes (src/errors/error-code-registry.ts)", () => {
  it("finds the code modules and their codes (a broken reader would pass every rule)", async () => {
    expect(CODE_MODULES).toEqual(
      expect.arrayContaining([
        "src/engine/error-codes.ts",
        "src/api/api-error-codes.ts",
        "src/values/errors.ts",
      ]),
    );
    const codes = await allCodes();
    expect(codes).toContain("INPUT_INVALID");
    expect(codes).toContain("VALUE_PRECISION_LOSS");
    expect(codes).toContain("NOT_FOUND");
  }, 60_000);

  it("writes no error code inline outside the code modules", async () => {
    const codes = await allCodes();
    const inline = FILES.filter((file) => !CODE_MODULES.includes(file)).flatMap((file) =>
      inlineErrorCodes(SOURCES.get(file) as string, codes).map((hit) => `${file}:${hit.line} "${hit.code}"`),
    );
    expect(inline).toEqual([]);
  }, 60_000);
});

describe("the inline-code detector", () => {
  const codes = new Set(["INPUT_INVALID", "EXECUTION_NOT_FOUND"]);

  it("flags a planted code in a throw, a comparison and an object", () => {
    const planted = [
      'import { TenorError } from "../errors/tenor-error.js";',
      'throw new TenorError("INPUT_INVALID", "bad");',
      "if (error.code === 'EXECUTION_NOT_FOUND') return;",
      "const failure = { code: `INPUT_INVALID` };",
    ].join("\n");
    expect(inlineErrorCodes(planted, codes)).toEqual([
      { line: 2, code: "INPUT_INVALID" },
      { line: 3, code: "EXECUTION_NOT_FOUND" },
      { line: 4, code: "INPUT_INVALID" },
    ]);
  });

  it("passes constants, comments, other strings and substituting templates", () => {
    const clean = [
      '// a comment naming INPUT_INVALID or "INPUT_INVALID" is prose',
      "/** `EXECUTION_NOT_FOUND` in a doc comment */",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text holding a template
      "throw new TenorError(ENGINE_ERRORS.INPUT_INVALID, `input ${x} is INPUT_INVALID`);",
      'const sql = "SELECT status FROM executions"; const re = /"INPUT_INVALID"/;',
      'const other = "INPUT_INVALID_NOT"; const half = x / 2; const s = "EXECUTION_NOT_FOUND_X";',
    ].join("\n");
    expect(inlineErrorCodes(clean, codes)).toEqual([]);
  });

  it("reads strings after a template with substitutions and across lines", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text holding a template
    const text = 'const a = `x ${f("a")} y`;\n\nconst b = "EXECUTION_NOT_FOUND";';
    expect(stringLiterals(text)).toEqual([
      { value: "a", line: 1 },
      { value: "EXECUTION_NOT_FOUND", line: 3 },
    ]);
  });

  it("takes the codes a module exports, as strings and in code objects", () => {
    expect(
      exportedCodes({
        ERRORS: { A: "CODE_A", B: "CODE_B" },
        SINGLE: "CODE_C",
        helper: () => 1,
        note: "not a code",
      }),
    ).toEqual(["CODE_A", "CODE_B", "CODE_C"]);
  });
});
