// Starts the built `ckpt mcp` as a real child process and connects the MCP SDK's own Client to it
// over stdio (tests need `npm run build` first, which `npm test` does).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { CKPT_BIN } from './cli.js';

export interface McpHandle {
  client: Client;
  /** Calls a tool and returns its result (tool errors included: isError). */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Calls a tool that must succeed and returns its structuredContent. */
  ok<T = any>(name: string, args?: Record<string, unknown>): Promise<T>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Calls a tool that must fail and returns its error code and text. */
  fails(name: string, args?: Record<string, unknown>): Promise<{ code: string; text: string; data: Record<string, unknown> }>;
  stderr(): string;
  close(): Promise<void>;
}

export interface StartMcpOptions {
  store: string;
  workspace: string;
  cwd?: string;
  args?: string[];
  /** Makes the client able to ask its user (MCP elicitation); this answers for the user. */
  elicit?: (params: ElicitRequest['params']) => ElicitResult;
}

export async function startMcp(options: StartMcpOptions): Promise<McpHandle> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CKPT_BIN, 'mcp', '--store', options.store, '--workspace', options.workspace, ...(options.args ?? [])],
    cwd: options.cwd ?? options.workspace,
    env: { PATH: process.env.PATH ?? '' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'ckpt-test', version: '1.0.0' }, options.elicit ? { capabilities: { elicitation: {} } } : undefined);
  const elicit = options.elicit;
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params));
  await client.connect(transport);
  await client.listTools(); // caches the output validators: every structuredContent is checked against its schema

  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    client,
    call,
    ok: async (name, args) => {
      const r = await call(name, args);
      if (r.isError) throw new Error(`${name} failed: ${textOf(r)}`);
      return r.structuredContent as never;
    },
    fails: async (name, args) => {
      const r = await call(name, args);
      if (!r.isError) throw new Error(`${name} succeeded, expected an error: ${textOf(r)}`);
      const text = textOf(r);
      const json = r.content.find((c) => c.type === 'text' && c.text.startsWith('{"error"'));
      const error = json && json.type === 'text' ? (JSON.parse(json.text) as { error: { code: string; data: Record<string, unknown> } }).error : undefined;
      return { code: error?.code ?? text.split(':')[0]!, text, data: error?.data ?? {} };
    },
    stderr: () => stderr,
    close: () => client.close(),
  };
}

export function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}
