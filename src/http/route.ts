// One way to declare an HTTP route (DESIGN §10 "Daemon"): method, path, zod schemas for its query and
// JSON body, and a handler returning the JSON result. The same declarations register the route on the
// hono app and build /openapi.json, so the document cannot drift from what the server validates.
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { CkptError } from '../index.js';
import { NO_CONTROL } from './schemas.js';

export interface RouteSpec<Q extends z.ZodType, B extends z.ZodType> {
  method: 'get' | 'post' | 'delete';
  /** hono path, e.g. `/sessions/:id/scan`; path parameters are strings. */
  path: string;
  summary: string;
  query?: Q;
  body?: B;
  handler: (input: { query: z.infer<Q>; body: z.infer<B>; params: Record<string, string>; c: Context }) => Promise<unknown>;
}

export interface RouteDoc {
  method: string;
  path: string;
  summary: string;
  query?: z.ZodType;
  body?: z.ZodType;
}

export interface Router {
  add<Q extends z.ZodType = z.ZodObject, B extends z.ZodType = z.ZodObject>(spec: RouteSpec<Q, B>): void;
  readonly docs: RouteDoc[];
}

export function createRouter(app: Hono): Router {
  const docs: RouteDoc[] = [];
  return {
    docs,
    add(spec) {
      docs.push({ method: spec.method, path: spec.path, summary: spec.summary, query: spec.query, body: spec.body });
      app[spec.method](spec.path, async (c) => {
        checkNoControl(c.req.param() as Record<string, string>, 'path parameter');
        checkNoControl(c.req.query(), 'query');
        const query = spec.query ? parseInput(spec.query, c.req.query(), 'query') : {};
        const body = spec.body ? parseInput(spec.body, await readJson(c), 'body') : {};
        const result = await spec.handler({ query, body, params: c.req.param() as Record<string, string>, c } as never);
        return result instanceof Response ? result : c.json(result as object);
      });
    },
  };
}

/** INVALID_ARGUMENT (400) when a path parameter or query value holds a control character (NUL, newline, …). */
function checkNoControl(values: Record<string, string | undefined>, where: string): void {
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && !NO_CONTROL.test(value)) {
      throw new CkptError('INVALID_ARGUMENT', `${where} ${name} holds a control character`, { where, name, reason: 'control-character' });
    }
  }
}

/** The request body as JSON: INVALID_ARGUMENT (400) naming the problem when it is not. */
async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new CkptError('INVALID_ARGUMENT', `request body is not valid JSON: ${(err as Error).message}`, { where: 'body', reason: 'json' });
  }
}

/** `value` checked against `schema`: INVALID_ARGUMENT (400) naming the first problem when it does not fit. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const first = issues[0];
  throw new CkptError('INVALID_ARGUMENT', `invalid ${where}${first ? `: ${first.path ? `${first.path}: ` : ''}${first.message}` : ''}`, { where, issues });
}
