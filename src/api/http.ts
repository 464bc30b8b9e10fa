import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import type { z } from "zod";
import { inputIssues } from "../engine/input-issues.js";
import { findUnstorable } from "../values/storable.js";
import { API_ERRORS } from "./api-error-codes.js";
import { apiError, type FieldError } from "./problem.js";

/**
 * Parses `value` with `schema` or refuses with REQUEST_INVALID listing every invalid field under
 * `where` (`path`, `query`, `header`, `body`).
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const errors: FieldError[] = inputIssues(parsed.error).map((issue) => ({
    pointer: issue.path ? `${where}.${issue.path}` : where,
    message: issue.message,
  }));
  throw apiError(
    API_ERRORS.REQUEST_INVALID,
    `the request is invalid: ${errors.map((e) => `${e.pointer}: ${e.message}`).join("; ")}`,
    { errors },
  );
}

/**
 * JSON bodies only, at most `limitBytes`. A request that carries a body with another content type
 * is refused with 415; a bodiless request passes with `req.body` undefined.
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const contentType: RequestHandler = (req: Request, _res: Response, next: NextFunction) => {
    const hasBody =
      req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    if (hasBody && !req.is(["application/json", "application/*+json"])) {
      next(
        apiError(
          API_ERRORS.UNSUPPORTED_MEDIA_TYPE,
          `send the body as application/json (got ${req.headers["content-type"] ?? "no content type"})`,
        ),
      );
      return;
    }
    next();
  };
  return [
    contentType,
    express.json({ limit: limitBytes, type: ["application/json", "application/*+json"], strict: false }),
    storableBody,
  ];
}

/**
 * Every JSON string of a body must be text PostgreSQL can store (src/values/storable.ts): a
 * U+0000 or a lone surrogate anywhere (`{"purpose":"a\u0000b"}`, a signal payload, a vote
 * reason) is refused with 400 naming the field, before any route reads it. A lone surrogate is
 * never stored as U+FFFD in its place.
 */
export const storableBody: RequestHandler = (req: Request, _res: Response, next: NextFunction) => {
  const found = req.body === undefined ? null : findUnstorable(req.body);
  if (!found) {
    next();
    return;
  }
  const pointer = found.path === "" ? "body" : `body.${found.path}`;
  next(
    apiError(API_ERRORS.REQUEST_INVALID, `the request is invalid: ${pointer}: ${found.reason}`, {
      errors: [{ pointer, message: found.reason }],
    }),
  );
};

/** Wraps an async handler so a rejection reaches the problem handler (Express 5 does this too; explicit is clearer). */
export function handler(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req, res, next) => {
    fn(req, res).catch(next);
  };
}
