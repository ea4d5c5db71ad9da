// /openapi.json: an OpenAPI 3.1 document assembled from the routes' own zod schemas (z.toJSONSchema),
// so what is documented is what is validated.
import { z } from 'zod';
import type { RouteDoc } from './route.js';

export function buildOpenApi(docs: readonly RouteDoc[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const d of docs) {
    const path = d.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const params: unknown[] = [...d.path.matchAll(/:([A-Za-z]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (d.query) {
      const js = z.toJSONSchema(d.query, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(js.properties ?? {})) {
        params.push({ name, in: 'query', required: js.required?.includes(name) ?? false, schema });
      }
    }
    const op: Record<string, unknown> = {
      summary: d.summary,
      security: [{ bearer: [] }],
      ...(params.length ? { parameters: params } : {}),
      ...(d.body ? { requestBody: { required: true, content: { 'application/json': { schema: z.toJSONSchema(d.body, { io: 'input', unrepresentable: 'any' }) } } } } : {}),
      responses: {
        '200': { description: 'the result, as the CLI prints it with --json (DESIGN §9)' },
        default: { description: 'an error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
    (paths[path] ??= {})[d.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'ckpt daemon', version, description: 'Safe, fast undo for AI coding agents: the CLI contract over HTTP (loopback only, bearer token).' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' }, data: { type: 'object' } } } },
        },
      },
    },
    paths,
  };
}
