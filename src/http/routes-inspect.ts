// Reading history over HTTP (DESIGN §9 `ckpt status|show|cat`): the session's status, what a tag
// names, and a file as it was at a tag — scoped: only images the session's own log records are read.
import { z } from 'zod';
import type { DaemonState } from './daemon-state.js';
import type { Router } from './route.js';
import { pathField, queryBool, tagField, workspaceQuery } from './schemas.js';

export function addInspectRoutes(r: Router, state: DaemonState): void {
  r.add({
    method: 'get',
    path: '/sessions/:id/status',
    summary: 'the current turn, unsettled paths and paths changed since ckpt last recorded them',
    query: workspaceQuery.extend({ limit: z.coerce.number().int().min(0).max(100_000).optional() }),
    handler: async ({ query, params }) => (await state.session(query.workspace, params.id!)).status({ limit: query.limit }),
  });

  r.add({
    method: 'get',
    path: '/sessions/:id/show',
    summary: 'what a tag names: its position, turn and checkpoint',
    query: workspaceQuery.extend({ tag: tagField }),
    handler: async ({ query, params }) => (await state.session(query.workspace, params.id!)).show(query.tag),
  });

  r.add({
    method: 'get',
    path: '/sessions/:id/file',
    summary: 'a file as it was at a tag (content base64 in JSON, or the raw bytes with raw=1)',
    query: workspaceQuery.extend({ tag: tagField, path: pathField, raw: queryBool }),
    handler: async ({ query, params, c }) => {
      const s = await state.session(query.workspace, params.id!);
      const { content, ...image } = await s.readFile(query.tag, query.path);
      if (query.raw) {
        return c.body(content ? new Uint8Array(content) : new Uint8Array(), 200, { 'content-type': 'application/octet-stream', 'x-ckpt-state': image.state });
      }
      return { ...image, ...(content ? { content: content.toString('base64'), encoding: 'base64' } : {}) };
    },
  });
}
