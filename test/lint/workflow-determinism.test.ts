import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import tsParser from "@typescript-eslint/parser";
import { ESLint, Linter } from "eslint";
import { describe, expect, it } from "vitest";
import tenor from "../../scripts/lint/workflow-determinism.js";

/**
 * The determinism rule of workflow bodies (scripts/lint/workflow-determinism.js): every planted
 * violation in test/fixtures/lint is reported with its message on its line and nothing else is,
 * the repository's own workflows are clean, and every file that defines a workflow is linted.
 */
const ROOT = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));
const FIXTURES = path.join(ROOT, "test/fixtures/lint");
const RULE = "tenor/workflow-determinism";

const CONFIG: Linter.Config[] = [
  {
    files: ["**/*.ts"],
    languageOptions: { parser: tsParser, sourceType: "module" },
    plugins: { tenor },
    rules: { [RULE]: "error" },
  },
];

/** `line:messageId` of every `// expect: messageId` marker in a fixture. */
function expectedFindings(source: string): string[] {
  return source
    .split("\n")
    .flatMap((line, index) => {
      const marker = /\/\/ expect: (\w+)/.exec(line);
      return marker ? [`${index + 1}:${marker[1]}`] : [];
    })
    .sort();
}

function lintSource(source: string, filename: string) {
  return new Linter({ configType: "flat" }).verify(source, CONFIG, { filename });
}

describe("workflow-determinism rule", () => {
  const fixtures = readdirSync(FIXTURES).filter((name) => name.endsWith(".ts"));

  it("has fixtures that plant every kind of violation", () => {
    const planted = new Set(
      fixtures.flatMap((name) =>
        expectedFindings(readFileSync(path.join(FIXTURES, name), "utf8")).map((f) => f.split(":")[1]),
      ),
    );
    expect([...planted].sort()).toEqual(
      Object.keys(tenor.rules?.["workflow-determinism"]?.meta?.messages ?? {}).sort(),
    );
  });

  for (const name of fixtures) {
    it(`reports exactly the planted violations of ${name}`, () => {
      const source = readFileSync(path.join(FIXTURES, name), "utf8");
      const messages = lintSource(source, name);
      expect(messages.filter((m) => m.ruleId !== RULE)).toEqual([]);
      expect(messages.map((m) => `${m.line}:${m.messageId}`).sort()).toEqual(expectedFindings(source));
    });
  }

  it("names the deterministic alternative in every message", () => {
    const messages = Object.values(tenor.rules?.["workflow-determinism"]?.meta?.messages ?? {});
    for (const message of messages)
      expect(message).toMatch(/ctx\.(now|uuid|random|sleep|step)|return it from/);
  });

  it("finds nothing in the repository's own workflows (npm run lint stays green)", async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const results = await eslint.lintFiles(["flows", "src/chain/lifecycle", "test/tutorial"]);
    expect(results.length).toBeGreaterThan(20);
    expect(results.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line} ${m.message}`))).toEqual([]);
    // Type-aware linting of every flow: seconds of CPU, many more on a shared two-core machine.
  }, 120_000);

  it("covers every file of the product that defines a workflow", async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const defining = ["src", "flows", "workers"].flatMap((folder) =>
      readdirSync(path.join(ROOT, folder), { recursive: true, encoding: "utf8" })
        .filter((file) => file.endsWith(".ts") && !file.startsWith("generated"))
        .map((file) => path.join(folder, file))
        .filter((file) => readFileSync(path.join(ROOT, file), "utf8").includes("defineWorkflow({")),
    );
    expect(defining.length).toBeGreaterThanOrEqual(6);
    for (const file of defining) {
      const config = await eslint.calculateConfigForFile(path.join(ROOT, file));
      expect(config?.rules?.[RULE], file).toBeDefined();
    }
  });
});
