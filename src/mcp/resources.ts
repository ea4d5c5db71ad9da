// MCP resources of the server's workspace: a session's checkpoint log
// (`ckpt://sessions/{id}/log`) and a file as it was at a tag (`ckpt://sessions/{id}/files/{tag}/{+path}`;
// `+` is RFC 6570 reserved expansion, so the path keeps its `/`). Sessions are looked up in this
// workspace only and file content comes from blobs that session's log references (or the workspace
// itself), so no other workspace's content is reachable. A ckpt failure is a JSON-RPC error whose
// message starts with the ckpt code (resources have no tool-error form).
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { CkptError, toCkptError } from '../index.js';
import { asText } from './content.js';
import type { McpContext } from './context.js';

/** JSON-RPC code for a missing resource (MCP spec). */
const RESOURCE_NOT_FOUND = -32002;

export function registerResources(server: McpServer, ctx: McpContext): void {
  server.registerResource(
    'session-log',
    new ResourceTemplate('ckpt://sessions/{id}/log', {
      list: async () => ({
        resources: (await ctx.workspace.list()).map((m) => ({
          uri: `ckpt://sessions/${m.id}/log`,
          name: `${m.id} log`,
          title: m.title ? `Checkpoints of "${m.title}"` : `Checkpoints of session ${m.id}`,
          mimeType: 'application/json',
        })),
      }),
    }),
    { title: 'Session checkpoint log', description: "A session's checkpoints as JSON: tag, seq, turn, tool, time and the paths each recorded.", mimeType: 'application/json' },
    async (uri, vars) =>
      mapped(async () => {
        const session = await ctx.workspace.get(one(vars.id, 'id'));
        const checkpoints = await session.checkpoints();
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ session: session.id, checkpoints }, null, 2) }] };
      }),
  );

  server.registerResource(
    'file-at-tag',
    new ResourceTemplate('ckpt://sessions/{id}/files/{tag}/{+path}', { list: undefined }),
    {
      title: 'File at a tag',
      description: "A workspace file as it was at a tag of a session (what a restore to the tag would put there). Text as text, anything else as a base64 blob.",
    },
    async (uri, vars) =>
      mapped(async () => {
        const session = await ctx.workspace.get(one(vars.id, 'id'));
        const f = await session.readFile(one(vars.tag, 'tag'), one(vars.path, 'path'));
        if (f.state === 'absent') throw new CkptError('NOT_FOUND', `${f.path} did not exist at ${f.tag}`, { path: f.path, tag: f.tag });
        if (f.state === 'dir') throw new CkptError('NOT_FOUND', `${f.path} was a folder at ${f.tag}, not a file`, { path: f.path, tag: f.tag });
        if (f.state === 'skipped') throw new CkptError('NOT_FOUND', `${f.path} was not recorded at ${f.tag} (${f.why ?? 'skipped'})`, { path: f.path, tag: f.tag });
        if (f.state === 'symlink') return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `symlink -> ${f.target ?? ''}` }] };
        const data = f.content ?? Buffer.alloc(0);
        const text = asText(data);
        return {
          contents: [
            text !== undefined
              ? { uri: uri.href, mimeType: 'text/plain', text }
              : { uri: uri.href, mimeType: 'application/octet-stream', blob: data.toString('base64') },
          ],
        };
      }),
  );
}

/** A template variable, percent-decoded (the SDK matches it raw). */
function one(value: string | string[] | undefined, name: string): string {
  const raw = Array.isArray(value) ? value.join(',') : value;
  if (raw === undefined || raw === '') throw new CkptError('INVALID_ARGUMENT', `the resource URI has no ${name}`);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new CkptError('INVALID_ARGUMENT', `the resource URI's ${name} is not valid percent-encoding`, { [name]: raw });
  }
}

async function mapped(read: () => Promise<ReadResourceResult>): Promise<ReadResourceResult> {
  try {
    return await read();
  } catch (err) {
    const e = toCkptError(err);
    const code = e.code.endsWith('NOT_FOUND') || e.code === 'TAG_PRUNED' ? RESOURCE_NOT_FOUND : e.code === 'INVALID_ARGUMENT' || e.code === 'PATH_ESCAPE' ? ErrorCode.InvalidParams : ErrorCode.InternalError;
    throw new McpError(code, `${e.code}: ${e.message}`, { error: e.toJSON() });
  }
}
