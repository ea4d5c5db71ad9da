import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CkptStdioTransport } from './stdio-transport.js';

const LIMIT = 64 * 1024;

async function harness() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const t = new CkptStdioTransport({ stdin, stdout, maxMessageBytes: LIMIT });
  const messages: JSONRPCMessage[] = [];
  const errors: string[] = [];
  const replies: Record<string, unknown>[] = [];
  let out = '';
  stdout.on('data', (d: Buffer) => {
    out += d.toString();
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      replies.push(JSON.parse(out.slice(0, nl)) as Record<string, unknown>);
      out = out.slice(nl + 1);
    }
  });
  t.onmessage = (m) => messages.push(m);
  t.onerror = (e) => errors.push(e.message);
  let closed = false;
  t.onclose = () => (closed = true);
  await t.start();
  const settle = () => new Promise((r) => setTimeout(r, 10));
  return { stdin, t, messages, errors, replies, settle, closed: () => closed };
}

const call = (id: number | string, bytes: number) => ({ jsonrpc: '2.0' as const, id, method: 'tools/call', params: { name: 'show', arguments: { tag: 'x'.repeat(bytes) } } });
/** As the SDK's client writes a request: the id last. */
const idLast = (id: number | string, bytes: number) => JSON.stringify({ method: 'tools/call', params: { name: 'show', arguments: { tag: 'x'.repeat(bytes) } }, jsonrpc: '2.0', id });

describe('ckpt mcp stdio transport', () => {
  it('delivers messages split anywhere, multi-byte characters included', async () => {
    const h = await harness();
    const line = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { note: 'é€😀' } } })}\n${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\r\n`;
    const bytes = Buffer.from(line);
    for (let i = 0; i < bytes.length; i += 3) h.stdin.write(bytes.subarray(i, i + 3));
    await h.settle();
    expect(h.messages).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { note: 'é€😀' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]);
    expect(h.errors).toEqual([]);
  });

  it('answers an oversize request (id last, as the SDK client writes it) with an error and keeps serving', async () => {
    const h = await harness();
    const big = idLast(7, LIMIT * 3);
    // Streamed in small chunks, as a pipe delivers it.
    for (let i = 0; i < big.length; i += 8192) h.stdin.write(big.slice(i, i + 8192));
    h.stdin.write(`\n${JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping' })}\n`);
    await h.settle();
    expect(h.replies).toEqual([{ jsonrpc: '2.0', id: 7, error: { code: -32600, message: expect.stringContaining('over the 65536-byte limit'), data: { bytes: big.length, limit: LIMIT } } }]);
    expect(h.messages).toEqual([{ jsonrpc: '2.0', id: 8, method: 'ping' }]);
    expect(h.errors).toHaveLength(1);
    expect(h.closed()).toBe(false);
  });

  it('finds the id at the start of the line too, a string id included', async () => {
    const h = await harness();
    h.stdin.write(`${JSON.stringify(call('req-"1"', LIMIT))}\n`);
    h.stdin.write(`${JSON.stringify(call(9, LIMIT + 1))}\n`);
    await h.settle();
    expect(h.replies.map((r) => r.id)).toEqual(['req-"1"', 9]);
    expect(h.messages).toEqual([]);
  });

  it('drops an oversize notification or response without answering it', async () => {
    const h = await harness();
    h.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(LIMIT) } })}\n`);
    h.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 3, result: { content: 'x'.repeat(LIMIT) } })}\n`);
    h.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' })}\n`);
    await h.settle();
    expect(h.replies).toEqual([]);
    expect(h.errors).toHaveLength(2);
    expect(h.messages).toEqual([{ jsonrpc: '2.0', id: 4, method: 'ping' }]);
  });

  it('accepts a message exactly at the limit', async () => {
    const h = await harness();
    const base = JSON.stringify(call(5, 0)).length;
    const exact = JSON.stringify(call(5, LIMIT - base));
    expect(Buffer.byteLength(exact)).toBe(LIMIT);
    h.stdin.write(`${exact}\n`);
    await h.settle();
    expect(h.messages).toHaveLength(1);
    expect(h.replies).toEqual([]);
  });

  it('answers lines that are not JSON-RPC (parse error, or invalid request with its id) and goes on', async () => {
    const h = await harness();
    h.stdin.write('not json\n\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    h.stdin.write('{"jsonrpc":"1.0","id":2,"method":"tools/list"}\n[1,2]\n');
    // Never answered: a malformed notification or response.
    h.stdin.write('{"jsonrpc":"1.0","method":"notifications/x"}\n{"jsonrpc":"2.0","id":3}\n');
    await h.settle();
    expect(h.errors).toHaveLength(5);
    expect(h.messages).toEqual([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(h.replies).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^not JSON/) } },
      { jsonrpc: '2.0', id: 2, error: { code: -32600, message: 'not a JSON-RPC 2.0 message' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'not a JSON-RPC 2.0 message' } },
    ]);
    expect(h.closed()).toBe(false);
  });
});
