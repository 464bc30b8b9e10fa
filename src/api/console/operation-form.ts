import type { z } from "zod";
import { API_ERRORS } from "../api-error-codes.js";
import { parseRequest } from "../http.js";
import { CreateOperationSchema, OperationFilterSchema } from "../operations/schemas.js";
import { apiError } from "../problem.js";
import { Html, html } from "./html.js";

/**
 * The console's form for a bulk operation, drawn from the API's own schemas (src/api/operations/
 * schemas.ts): the actions, the filter's fields and each action's parameters are read from
 * `CreateOperation` and `OperationFilter`, so an action or field the API gains shows here with no
 * change to the page. What the person typed is parsed by the same schema as `POST /v1/operations`.
 */

/** The form as posted: `action`, `filter.<field>` and `param.<field>`, a list for repeated names. */
export type OperationFormFields = Record<string, string | string[]>;

type FieldKind =
  | { kind: "text" }
  | { kind: "number" }
  | { kind: "flag" }
  | { kind: "choices"; options: readonly string[] }
  | { kind: "json" };

interface FormField {
  /** The form's name: `filter.workflow`, `param.reason`. */
  name: string;
  /** The API's field: `workflow`, `reason`. */
  field: string;
  description: string | undefined;
  kind: FieldKind;
}

/** Fields the form sets itself rather than asking for. */
const NOT_PARAMETERS = new Set(["action", "filter", "dryRun"]);

// biome-ignore lint/suspicious/noExplicitAny: zod's internal definition is read to learn a field's kind.
type AnySchema = z.ZodType & { _zod: { def: any }; description?: string };

function kindOf(schema: AnySchema): FieldKind {
  const def = schema._zod.def;
  if (def.type === "optional" || def.type === "nullable") return kindOf(def.innerType);
  if (def.type === "number") return { kind: "number" };
  if (def.type === "boolean") return { kind: "flag" };
  if (def.type === "array" && def.element?._zod.def.type === "enum")
    return { kind: "choices", options: Object.values(def.element._zod.def.entries) as string[] };
  if (def.type === "string" || def.type === "pipe" || def.type === "enum") return { kind: "text" };
  return { kind: "json" };
}

function fieldsOf(shape: Record<string, unknown>, prefix: string, skip: Set<string>): FormField[] {
  return Object.entries(shape)
    .filter(([field]) => !skip.has(field))
    .map(([field, schema]) => ({
      name: `${prefix}.${field}`,
      field,
      description: (schema as AnySchema).description,
      kind: kindOf(schema as AnySchema),
    }));
}

export const FILTER_FIELDS = fieldsOf(OperationFilterSchema.shape, "filter", new Set());
export const PARAMETER_FIELDS = fieldsOf(CreateOperationSchema.shape, "param", NOT_PARAMETERS);
export const ACTIONS: readonly string[] = CreateOperationSchema.shape.action.options;

function valuesOf(fields: OperationFormFields, name: string): string[] {
  const raw = fields[name];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.map((v) => v.trim()).filter((v) => v !== "");
}

function fieldValue(field: FormField, fields: OperationFormFields): unknown {
  const values = valuesOf(fields, field.name);
  if (field.kind.kind === "choices") return values.length > 0 ? values : undefined;
  const [text] = values;
  if (text === undefined) return undefined;
  switch (field.kind.kind) {
    case "number":
      // Not a number: left as text, so the schema's refusal names the field and what it got.
      return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    case "flag":
      return text === "true";
    case "json":
      try {
        return JSON.parse(text);
      } catch (error) {
        const message = `must be JSON (got ${JSON.stringify(text)}: ${(error as Error).message})`;
        throw apiError(
          API_ERRORS.REQUEST_INVALID,
          `the request is invalid: body.${field.field}: ${message}`,
          {
            errors: [{ pointer: `body.${field.field}`, message }],
          },
        );
      }
    default:
      return text;
  }
}

/** The body of `POST /v1/operations` the form names, checked by its schema (REQUEST_INVALID otherwise). */
export function operationBodyOf(fields: OperationFormFields): z.infer<typeof CreateOperationSchema> {
  const collect = (list: readonly FormField[]) =>
    Object.fromEntries(
      list.flatMap((f) => {
        const value = fieldValue(f, fields);
        return value === undefined ? [] : [[f.field, value]];
      }),
    );
  const action = valuesOf(fields, "action")[0];
  return parseRequest(
    CreateOperationSchema,
    { ...(action ? { action } : {}), filter: collect(FILTER_FIELDS), ...collect(PARAMETER_FIELDS) },
    "body",
  );
}

/** Only the form's own fields, as strings: what the confirmation page carries on. */
export function operationFormFields(body: Record<string, unknown> | undefined): OperationFormFields {
  const names = new Set([
    "action",
    ...FILTER_FIELDS.map((f) => f.name),
    ...PARAMETER_FIELDS.map((f) => f.name),
  ]);
  const fields: OperationFormFields = {};
  for (const [name, value] of Object.entries(body ?? {})) {
    if (!names.has(name)) continue;
    if (typeof value === "string") fields[name] = value;
    else if (Array.isArray(value)) fields[name] = value.filter((v): v is string => typeof v === "string");
  }
  return fields;
}

/** The same fields as hidden inputs: the confirmation posts exactly what was counted. */
export function hiddenFields(fields: OperationFormFields): Html {
  return html`${Object.entries(fields).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map(
      (v) => html`<input type="hidden" name="${name}" value="${v}">`,
    ),
  )}`;
}

function input(field: FormField, fields: OperationFormFields): Html {
  const id = field.name.replace(".", "-");
  const [value = ""] = valuesOf(fields, field.name);
  const label = html`<label for="${id}">${field.field}</label>`;
  const hint = field.description ? html` <small>${field.description}</small>` : null;
  switch (field.kind.kind) {
    case "choices": {
      const chosen = new Set(valuesOf(fields, field.name));
      return html`<fieldset><legend>${field.field}</legend>${field.kind.options.map(
        (o) =>
          html`<label><input type="checkbox" name="${field.name}" value="${o}" ${chosen.has(o) ? new Html("checked") : null}> ${o}</label>`,
      )}${hint}</fieldset>`;
    }
    case "number":
      return html`<p>${label}<input id="${id}" name="${field.name}" inputmode="numeric" value="${value}">${hint}</p>`;
    case "flag":
      return html`<p><label><input type="checkbox" name="${field.name}" value="true" ${value === "true" ? new Html("checked") : null}> ${field.field}</label>${hint}</p>`;
    case "json":
      return html`<p>${label}<textarea id="${id}" name="${field.name}" rows="2" cols="60" placeholder="JSON">${value}</textarea>${hint}</p>`;
    default:
      return html`<p>${label}<input id="${id}" name="${field.name}" value="${value}">${hint}</p>`;
  }
}

/** The form asking for an action, a filter and the action's parameters; it posts to `countPath`. */
export function operationForm(countPath: string, csrf: string, fields: OperationFormFields): Html {
  const action = valuesOf(fields, "action")[0];
  return html`<form method="post" action="${countPath}" aria-label="New operation">
<input type="hidden" name="csrf" value="${csrf}">
<p><label for="action">Action</label><select id="action" name="action">${ACTIONS.map(
    (a) => html`<option ${a === action ? new Html("selected") : null}>${a}</option>`,
  )}</select></p>
<h3>Runs it acts on</h3>${FILTER_FIELDS.map((f) => input(f, fields))}
<h3>Parameters</h3>${PARAMETER_FIELDS.map((f) => input(f, fields))}
<p><button type="submit">Count the runs</button> Nothing changes until you confirm the count.</p></form>`;
}
