/**
 * ESLint plugin `tenor`, rule `workflow-determinism` (docs/writing-workflows.md, "The determinism
 * rule"). A workflow body re-runs from the top on every turn and must take the same journal
 * positions each time, so inside the body (a `defineWorkflow` run function, or a helper whose first
 * parameter is a `WorkflowContext`) but outside the callbacks of `ctx.step` and the `check` of
 * `ctx.waitFor`, it reports clock reads, randomness, network calls, timers, `process.env` reads and
 * writes to module-level bindings; inside a step callback, it reports writes to variables of the
 * enclosing body, which a replay (the callback does not run) would leave unset.
 *
 * Plain JavaScript so ESLint loads it without a TypeScript loader; types are checked through JSDoc.
 */

/** @typedef {import("eslint").Rule.Node} Node */

const NOW = "use `await ctx.now()` (journaled on first use, the same Date on every replay)";
const EFFECT = "an external effect: do it inside `ctx.step(name, fn)` or an activity (`defineActivity`)";

/** Every message, each naming the deterministic alternative. */
const MESSAGES = {
  dateNow: `\`Date.now()\` in a workflow body differs on every replay: ${NOW}.`,
  newDate: `\`new Date()\` without arguments reads the clock: ${NOW}.`,
  performanceNow: `\`performance.now()\` in a workflow body differs on every replay: ${NOW}.`,
  mathRandom:
    "`Math.random()` in a workflow body differs on every replay: use `await ctx.random()` (journaled on first use).",
  randomUuid:
    "`{{name}}()` in a workflow body differs on every replay: use `await ctx.uuid()` (journaled on first use).",
  randomValues:
    "`{{name}}()` in a workflow body differs on every replay: use `await ctx.random()` or make the bytes inside `ctx.step`.",
  network: `\`{{name}}\` is ${EFFECT}.`,
  timer:
    "`{{name}}` in a workflow body resumes it at a moment no journal records: use `ctx.sleep(name, duration)` or `ctx.sleepUntil(name, at)`.",
  processEnv:
    "`process.env` read in a workflow body: configuration is parsed once in src/config; pass the value in the input or read it inside `ctx.step`.",
  moduleWrite:
    "`{{name}}` is a module-level binding: a write from a workflow body is lost on a restart and shared between executions; keep the state in the body's own variables or return it from `ctx.step`.",
  outerWrite:
    "`{{name}}` belongs to the enclosing workflow body: a step callback does not run on replay, so this write would be skipped; return the value from the step (`{{name}} = await ctx.step(...)`).",
};

/** Calls of the form `object.property(...)` and the message each gets. */
const MEMBER_CALLS = new Map([
  ["Date.now", "dateNow"],
  ["performance.now", "performanceNow"],
  ["Math.random", "mathRandom"],
  ["crypto.randomUUID", "randomUuid"],
  ["crypto.getRandomValues", "randomValues"],
  ["crypto.randomBytes", "randomValues"],
  ["http.request", "network"],
  ["http.get", "network"],
  ["https.request", "network"],
  ["https.get", "network"],
]);

/** Calls of a bare name and the message each gets (`randomUUID` as imported from node:crypto). */
const BARE_CALLS = new Map([
  ["fetch", "network"],
  ["setTimeout", "timer"],
  ["setInterval", "timer"],
  ["setImmediate", "timer"],
  ["randomUUID", "randomUuid"],
  ["getRandomValues", "randomValues"],
  ["randomBytes", "randomValues"],
]);

function isFunction(node) {
  return (
    node.type === "FunctionExpression" ||
    node.type === "ArrowFunctionExpression" ||
    node.type === "FunctionDeclaration"
  );
}

function propertyName(node) {
  if (!node) return undefined;
  if (node.type === "Identifier") return node.name;
  if (node.type === "Literal" && typeof node.value === "string") return node.value;
  return undefined;
}

function calleeName(callee) {
  if (callee.type === "Identifier") return callee.name;
  if (callee.type === "MemberExpression" && !callee.computed) return propertyName(callee.property);
  return undefined;
}

/** `run` of the options object passed to `defineWorkflow(...)`. */
function isDefineWorkflowRun(fn) {
  const property = fn.parent;
  if (property?.type !== "Property" || propertyName(property.key) !== "run") return false;
  const options = property.parent;
  const call = options?.parent;
  return (
    options.type === "ObjectExpression" &&
    call?.type === "CallExpression" &&
    call.arguments[0] === options &&
    calleeName(call.callee) === "defineWorkflow"
  );
}

/** A helper the body calls with its context: first parameter typed `WorkflowContext`. */
function takesWorkflowContext(fn) {
  const annotation = fn.params[0]?.typeAnnotation?.typeAnnotation;
  if (annotation?.type !== "TSTypeReference") return false;
  const name = annotation.typeName;
  const last = name.type === "TSQualifiedName" ? name.right : name;
  return last.type === "Identifier" && last.name === "WorkflowContext";
}

function isWorkflowBody(fn) {
  return isDefineWorkflowRun(fn) || takesWorkflowContext(fn);
}

/** The function passed to `x.step(name, fn)`, or the `check` of `x.waitFor(name, { check })`. */
function isStepCallback(fn) {
  const parent = fn.parent;
  if (parent?.type === "CallExpression" && parent.arguments[1] === fn) {
    return parent.callee.type === "MemberExpression" && propertyName(parent.callee.property) === "step";
  }
  if (parent?.type === "Property" && propertyName(parent.key) === "check") {
    const call = parent.parent?.parent;
    return (
      call?.type === "CallExpression" &&
      call.callee.type === "MemberExpression" &&
      propertyName(call.callee.property) === "waitFor"
    );
  }
  return false;
}

/**
 * Where `node` sits: the innermost workflow body around it and the outermost step callback between
 * the two (if any), or null outside every workflow body.
 */
function placeOf(node) {
  let step = null;
  for (let current = node.parent; current; current = current.parent) {
    if (!isFunction(current)) continue;
    if (isWorkflowBody(current)) return { body: current, step };
    if (isStepCallback(current)) step = current;
  }
  return null;
}

/** The variable an identifier refers to, resolved through the scopes around it. */
function resolve(sourceCode, identifier) {
  for (let scope = sourceCode.getScope(identifier); scope; scope = scope.upper) {
    const variable = scope.set.get(identifier.name);
    if (variable) return variable;
  }
  return null;
}

function within(inner, outer) {
  return inner.range[0] >= outer.range[0] && inner.range[1] <= outer.range[1];
}

/** The identifier a write lands on: `x = ...`, `x.y = ...`, `x[i]++` all write through `x`. */
function writtenIdentifier(target) {
  let node = target;
  while (node.type === "MemberExpression") node = node.object;
  return node.type === "Identifier" ? node : null;
}

/** @type {import("eslint").Rule.RuleModule} */
const workflowDeterminism = {
  meta: {
    type: "problem",
    docs: { description: "Workflow bodies must be deterministic; effects belong in steps" },
    messages: MESSAGES,
    schema: [],
  },
  create(context) {
    const { sourceCode } = context;

    function reportInBody(node, messageId, name) {
      const place = placeOf(node);
      if (place && !place.step) context.report({ node, messageId, data: { name } });
    }

    function checkWrite(node, target) {
      const place = placeOf(node);
      if (!place) return;
      const identifier = writtenIdentifier(target);
      if (!identifier) return;
      const variable = resolve(sourceCode, identifier);
      const declaredAt = variable?.scope;
      const moduleLevel = !declaredAt || declaredAt.type === "module" || declaredAt.type === "global";
      const data = { name: identifier.name };
      if (!place.step) {
        if (moduleLevel) context.report({ node, messageId: "moduleWrite", data });
        return;
      }
      const block = declaredAt?.block;
      if (block && within(block, place.body) && !within(block, place.step)) {
        context.report({ node, messageId: "outerWrite", data });
      }
    }

    return {
      CallExpression(node) {
        const { callee } = node;
        if (callee.type === "Identifier") {
          const messageId = BARE_CALLS.get(callee.name);
          if (messageId) reportInBody(node, messageId, callee.name);
          if (callee.name === "Date") reportInBody(node, "newDate", "Date");
          return;
        }
        if (callee.type !== "MemberExpression" || callee.computed) return;
        const property = propertyName(callee.property);
        const object = callee.object;
        const objectName = object.type === "Identifier" ? object.name : propertyName(object.property);
        const key = `${objectName}.${property}`;
        const messageId = MEMBER_CALLS.get(key);
        if (messageId) return reportInBody(node, messageId, key);
        // `globalThis.fetch(...)`, `window.setTimeout(...)`.
        const bare = BARE_CALLS.get(property ?? "");
        if (bare && (objectName === "globalThis" || objectName === "window")) reportInBody(node, bare, key);
      },
      NewExpression(node) {
        if (node.callee.type === "Identifier" && node.callee.name === "Date" && node.arguments.length === 0) {
          reportInBody(node, "newDate", "Date");
        }
      },
      MemberExpression(node) {
        if (
          node.object.type === "Identifier" &&
          node.object.name === "process" &&
          propertyName(node.property) === "env"
        ) {
          reportInBody(node, "processEnv", "process.env");
        }
      },
      AssignmentExpression(node) {
        checkWrite(node, node.left);
      },
      UpdateExpression(node) {
        checkWrite(node, node.argument);
      },
    };
  },
};

/** The plugin as ESLint's flat configuration takes it. */
export default {
  meta: { name: "eslint-plugin-tenor" },
  rules: { "workflow-determinism": workflowDeterminism },
};
