// Recording and reading history over HTTP (DESIGN §9 `ckpt turn|capture|settle|scan|log|diff`). Paths
// are relative to the workspace root (or absolute inside it). A scan through the daemon looks only at
// the paths its watcher saw touched when it can do so exactly, else it is the full stat scan.
import { z } from 'zod';
import { publicImage, publicScanResult } from '../index.js';
import type { DaemonState } from './daemon-state.js';
import type { Router } from './route.js';
import { sessionRoutes } from './session-route.js';
import { pathsField, queryBool, tagField, toolField, workspaceBody, workspaceQuery } from './schemas.js';

export function addCheckpointRoutes(r: Router, state: DaemonState): void {
  const route = sessionRoutes(r, state);
  route('POST /turn', {
    summary: 'start the next turn (the user sent a message)',
    body: workspaceBody.extend({ messageCount: z.number().int().nonnegative().optional(), text: z.string().max(100_000).optional() }),
    handler: async ({ s, body }) => {
      // The turn-start scan through the workspace's watcher (only the touched paths when exact).
      const t = await s.turn({ messageCount: body.messageCount, text: body.text, scan: (tool) => state.scan(s, { tool }) });
      return { turn: t.turn, tag: t.tag, ...(t.outside ? { outside: t.outside } : {}) };
    },
  });

  route('POST /capture', {
    summary: 'record the before-images of paths a tool is about to change (durable on return)',
    body: workspaceBody.extend({ paths: pathsField.min(1), tool: toolField.optional() }),
    handler: async ({ s, body }) => {
      const res = await s.capture(body.paths, { tool: body.tool, cwd: s.workspaceRoot });
      return { tag: res.tag, files: res.files.map(publicImage), ...(res.disabled ? { disabled: true } : {}) };
    },
  });

  route('POST /settle', {
    summary: 'record the after-state of paths a tool has written',
    body: workspaceBody.extend({ paths: pathsField.min(1), tag: tagField.optional() }),
    handler: async ({ s, body }) => {
      const res = await s.settle(body.paths, { tag: body.tag, cwd: s.workspaceRoot });
      return { tag: res.tag, files: res.files.map(publicImage) };
    },
  });

  route('POST /scan', {
    summary: 'record what changed since ckpt last looked (watcher-fast when the daemon watches the workspace)',
    body: workspaceBody.extend({ tool: toolField.optional(), full: z.boolean().optional() }),
    handler: async ({ s, body }) => publicScanResult(await state.scan(s, { tool: body.tool ?? 'scan', full: body.full })),
  });

  route('GET /log', {
    summary: "the session's checkpoints",
    query: workspaceQuery,
    handler: async ({ s }) => ({ checkpoints: await s.checkpoints() }),
  });

  route('GET /diff', {
    summary: 'changes between two tags, or from a tag to the present workspace (stat, and patch with patch=1)',
    query: workspaceQuery.extend({ from: tagField, to: tagField.optional(), patch: queryBool }),
    handler: async ({ s, query }) => s.diff(query.from, query.to, { patch: query.patch }),
  });
}
