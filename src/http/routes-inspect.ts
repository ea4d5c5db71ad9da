// Reading history over HTTP (DESIGN §9 `ckpt status|show|cat`): the session's status, what a tag
// names, and a file as it was at a tag — scoped: only images the session's own log records are read.
import { z } from 'zod';
import type { DaemonState } from './daemon-state.js';
import type { Router } from './route.js';
import { sessionRoutes } from './session-route.js';
import { pathField, queryBool, tagField, workspaceQuery } from './schemas.js';

export function addInspectRoutes(r: Router, state: DaemonState): void {
  const route = sessionRoutes(r, state);
  route('GET /status', {
    summary: 'the current turn, unsettled paths and paths changed since ckpt last recorded them',
    query: workspaceQuery.extend({ limit: z.coerce.number().int().min(0).max(100_000).optional() }),
    handler: async ({ s, query }) => s.status({ limit: query.limit }),
  });

  route('GET /show', {
    summary: 'what a tag names: its position, turn and checkpoint',
    query: workspaceQuery.extend({ tag: tagField }),
    handler: async ({ s, query }) => s.show(query.tag),
  });

  route('GET /file', {
    summary: 'a file as it was at a tag (content base64 in JSON, or the raw bytes with raw=1)',
    query: workspaceQuery.extend({ tag: tagField, path: pathField, raw: queryBool }),
    handler: async ({ s, query, c }) => {
      const { content, ...image } = await s.readFile(query.tag, query.path);
      if (query.raw) {
        return c.body(content ? new Uint8Array(content) : new Uint8Array(), 200, { 'content-type': 'application/octet-stream', 'x-ckpt-state': image.state });
      }
      return { ...image, ...(content ? { content: content.toString('base64'), encoding: 'base64' } : {}) };
    },
  });
}
