import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CkptError } from '../index.js';
import { ok, registerTool } from './results.js';

async function connected(register: (server: McpServer) => void): Promise<Client> {
  const server = new McpServer({ name: 't', version: '1' });
  register(server);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'c', version: '1' });
  await client.connect(b);
  await client.listTools();
  return client;
}

const config = {
  title: 'T',
  description: 'a test tool',
  inputSchema: z.strictObject({ fail: z.boolean().optional() }),
  outputSchema: z.object({ kept: z.string(), nested: z.object({ n: z.number() }) }),
  annotations: { readOnlyHint: true },
};

describe('registerTool', () => {
  it('drops fields the output schema does not publish, so clients validating it keep working', async () => {
    const client = await connected((s) =>
      registerTool(s, 't', config, async () => ok({ kept: 'yes', grown: 'later field', nested: { n: 1, extra: true } }, 'text')),
    );
    const r = await client.callTool({ name: 't', arguments: {} });
    expect(r.structuredContent).toEqual({ kept: 'yes', nested: { n: 1 } });
  });

  it('turns a thrown CkptError into a tool error naming its code', async () => {
    const client = await connected((s) =>
      registerTool(s, 't', config, async () => {
        throw new CkptError('TAG_NOT_FOUND', 'no such tag', { tag: '9' });
      }),
    );
    const r = await client.callTool({ name: 't', arguments: {} });
    expect(r.isError).toBe(true);
    expect(r.content).toEqual([
      { type: 'text', text: 'TAG_NOT_FOUND: no such tag' },
      { type: 'text', text: JSON.stringify({ error: { code: 'TAG_NOT_FOUND', message: 'no such tag', data: { tag: '9' } } }) },
    ]);
  });
});
