import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ALL_WORKFLOWS } from "../../flows/index.js";
import { renderOpenApiDocument } from "../../src/api/openapi/document.js";
import { applicationRoutes } from "../../workers/api-routes.js";
import { DECLARED_ROUTES } from "./support/declared-routes.js";

const committedPath = fileURLToPath(new URL("../../openapi.json", import.meta.url));

describe("openapi.json", () => {
  const generated = renderOpenApiDocument(ALL_WORKFLOWS, applicationRoutes);

  it("the committed document is current (regenerate with `npm run openapi`)", () => {
    expect(readFileSync(committedPath, "utf8")).toBe(generated);
  });

  it("documents every declared route, health, the board, each workflow's own input schema, and problem responses", () => {
    const doc = JSON.parse(generated);
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        "/admin/queues",
        "/admin/sign-in",
        "/livez",
        "/openapi.json",
        "/readyz",
        ...new Set(DECLARED_ROUTES.filter((route) => typeof route.openapi !== "function").map((r) => r.path)),
        // A workflow started through its own route (asset.mint) has no generic start path.
        ...new Set(
          ALL_WORKFLOWS.filter((w) => w.startedThrough === undefined).map(
            (w) => `/v1/workflows/${w.name}/executions`,
          ),
        ),
      ].sort(),
    );
    expect(ALL_WORKFLOWS.some((w) => w.startedThrough !== undefined)).toBe(true);
    const input = doc.components.schemas["WorkflowInput.demo.asset-issue"];
    expect(input.properties.symbol).toMatchObject({ type: "string", pattern: "^[A-Z0-9]{2,11}$" });
    const start = doc.paths["/v1/workflows/demo.asset-issue/executions"].post;
    expect(start.requestBody.content["application/json"].schema.$ref).toBe(
      "#/components/schemas/WorkflowInput.demo.asset-issue",
    );
    expect(start.responses["422"].content["application/problem+json"].schema.$ref).toBe(
      "#/components/schemas/Problem",
    );
    expect(start.description).toContain("24 h");
  });
});
