// Routes on one session, `/sessions/:id…`: declared as `route('POST /capture', spec)`, and the session
// the call names is resolved before the handler runs (its workspace from the query of a GET, from
// the JSON body of a POST; `:id` may be a unique prefix or `~latest`), so no handler looks it up.
import type { Context } from 'hono';
import type { z } from 'zod';
import type { Session } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import type { RouteSpec, Router } from './route.js';

type Method = 'GET' | 'POST';

export interface SessionRouteSpec<Q extends z.ZodType, B extends z.ZodType> {
  summary: string;
  query?: Q;
  body?: B;
  handler: (input: { s: Session; query: z.infer<Q>; body: z.infer<B>; c: Context }) => Promise<unknown>;
}

/** A `route(line, spec)` that adds `METHOD /sessions/:id<suffix>` (`GET` alone: the session itself) to `r`. */
export function sessionRoutes(r: Router, state: DaemonState) {
  return <Q extends z.ZodType = z.ZodObject, B extends z.ZodType = z.ZodObject>(line: Method | `${Method} /${string}`, spec: SessionRouteSpec<Q, B>): void => {
    const [verb, suffix = ''] = line.split(' ') as [Method, string?];
    const method = verb.toLowerCase() as RouteSpec<Q, B>['method'];
    r.add<Q, B>({
      method,
      path: `/sessions/:id${suffix}`,
      summary: spec.summary,
      query: spec.query,
      body: spec.body,
      handler: async ({ query, body, params, c }) => {
        const { workspace } = (method === 'post' ? body : query) as { workspace: string };
        // A GET changes nothing: an interrupted restore is left for the next POST to finish.
        return spec.handler({ s: await state.session(workspace, params.id!, { recover: method === 'post' }), query, body, c });
      },
    });
  };
}
