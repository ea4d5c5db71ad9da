// `ckpt mcp`'s stdio transport: newline-delimited JSON-RPC on stdin/stdout like the SDK's
// StdioServerTransport, except that one message over the size limit does not end the server. The
// SDK's transport closes when a line outgrows its 10 MiB read buffer, so `ckpt mcp` exited and the
// agent lost its checkpoints for the rest of its session. This one drops such a line as it streams
// in (holding at most the limit plus its first and last few KiB), answers it with a JSON-RPC error
// when it was a request whose id can be read at the line's start or end, and keeps serving. A line
// that is not a JSON-RPC message is answered with a parse or invalid-request error (id null when it
// has none), never left unanswered. A request whose params the SDK's schema refuses is answered
// "Invalid params" with the fields at fault, where the SDK says "Internal error" with its validator's
// dump (modelcontextprotocol/typescript-sdk#2284: `tools/call` with `"arguments": null`).
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The largest message read (the SDK's own limit): a tool call's arguments are far smaller. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** JSON-RPC "Invalid Request" and "Parse error". */
const INVALID_REQUEST = -32600;
const PARSE_ERROR = -32700;
/** JSON-RPC "Invalid params" and "Internal error". */
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
/** How much of an oversize line's start and end is kept to find its id. */
const EDGE_BYTES = 4096;

const ID = String.raw`(-?\d{1,16}|"(?:[^"\\]|\\.){0,256}")`;
/** `{"jsonrpc":"2.0","method":"…","id":7,` — the id among the leading short members. */
const HEAD_ID = new RegExp(String.raw`^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"(?:[^"\\]|\\.)*"\s*,)*\s*"id"\s*:\s*${ID}`);
/** `…,"jsonrpc":"2.0","id":7}` — the id as the last member (the SDK's client writes it there). */
const TAIL_ID = new RegExp(String.raw`,\s*"id"\s*:\s*${ID}\s*\}\s*$`);
const METHOD = /"method"\s*:\s*"/;

export interface StdioTransportOptions {
  maxMessageBytes?: number;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

export class CkptStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly max: number;
  private readonly stdin: NodeJS.ReadableStream;
  private readonly stdout: NodeJS.WritableStream;
  /** The current line's bytes so far (while it is within the limit). */
  private pieces: Buffer[] = [];
  private size = 0;
  /** Set while the current line is over the limit and being dropped. */
  private dropping?: { head: Buffer; tail: Buffer; bytes: number };
  private closed = false;

  constructor(options: StdioTransportOptions = {}) {
    this.max = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
  }

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    const json = serializeMessage(invalidParams(message) ?? message);
    if (!this.stdout.write(json)) await new Promise<void>((resolve) => this.stdout.once('drain', resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStreamError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.pieces = [];
    this.dropping = undefined;
    this.onclose?.();
  }

  private readonly onStreamError = (err: Error) => this.onerror?.(err);

  private readonly onData = (data: Buffer | string) => {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    let start = 0;
    while (start < chunk.length && !this.closed) {
      const nl = chunk.indexOf(0x0a, start);
      this.take(chunk.subarray(start, nl === -1 ? chunk.length : nl));
      if (nl === -1) break;
      this.endLine();
      start = nl + 1;
    }
  };

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropping) {
      const d = this.dropping;
      d.bytes += piece.length;
      d.tail = lastBytes(Buffer.concat([d.tail, lastBytes(piece, EDGE_BYTES)]), EDGE_BYTES);
      return;
    }
    if (this.size + piece.length <= this.max) {
      this.pieces.push(piece);
      this.size += piece.length;
      return;
    }
    const held = Buffer.concat([...this.pieces, piece.subarray(0, EDGE_BYTES)]);
    this.dropping = { head: held.subarray(0, EDGE_BYTES), tail: lastBytes(Buffer.concat([lastBytes(held, EDGE_BYTES), lastBytes(piece, EDGE_BYTES)]), EDGE_BYTES), bytes: this.size + piece.length };
    this.pieces = [];
    this.size = 0;
  }

  private endLine(): void {
    if (this.dropping) {
      const d = this.dropping;
      this.dropping = undefined;
      this.refuseOversize(d.head.toString('utf8'), d.tail.toString('utf8').replace(/\r$/, ''), d.bytes);
      return;
    }
    const line = Buffer.concat(this.pieces).toString('utf8').replace(/\r$/, '');
    this.pieces = [];
    this.size = 0;
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      this.refuseMalformed(line, err);
      return;
    }
    this.onmessage?.(message);
  }

  /**
   * A line that is not JSON is answered "Parse error" (id null, as JSON-RPC 2.0 says), JSON that is
   * not a JSON-RPC message "Invalid Request" — with its id when it has a usable one and a method (a
   * request), else id null — so a client waiting on that request hears why instead of nothing.
   */
  private refuseMalformed(line: string, err: unknown): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.reply(null, PARSE_ERROR, `not JSON: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const v = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { id?: unknown; method?: unknown }) : undefined;
    if (v && v.method === undefined && v.id !== undefined) return; // a malformed response: answering it would be read as a request's answer
    const id = v && (typeof v.id === 'string' || (typeof v.id === 'number' && Number.isSafeInteger(v.id))) ? v.id : null;
    if (v && typeof v.method === 'string' && v.id === undefined) return; // a notification: never answered
    this.reply(id, INVALID_REQUEST, 'not a JSON-RPC 2.0 message');
  }

  private reply(id: string | number | null, code: number, message: string, data?: Record<string, unknown>): void {
    const error = { code, message, ...(data ? { data } : {}) };
    void this.send({ jsonrpc: '2.0', id, error } as unknown as JSONRPCMessage).catch((e: unknown) => this.onerror?.(e instanceof Error ? e : new Error(String(e))));
  }

  private refuseOversize(head: string, tail: string, bytes: number): void {
    const message = `a message of ${bytes} bytes is over the ${this.max}-byte limit of ckpt mcp: it was dropped (the server keeps serving)`;
    this.onerror?.(new Error(message));
    // Only a request is answered: an error "response" to a notification or to a client's own response would be read as the answer to something else.
    if (!METHOD.test(head) && !METHOD.test(tail)) return;
    const found = HEAD_ID.exec(head)?.[1] ?? TAIL_ID.exec(tail)?.[1];
    if (found === undefined) return;
    let id: string | number;
    try {
      id = JSON.parse(found) as string | number;
    } catch {
      return;
    }
    this.reply(id, INVALID_REQUEST, message, { bytes, limit: this.max });
  }
}

/**
 * The SDK's answer to a request whose params failed its schema (an internal error whose message is
 * the validator's issue list, each at a path under `params`) as "Invalid params"; undefined for any
 * other message.
 */
export function invalidParams(message: JSONRPCMessage): JSONRPCMessage | undefined {
  const error = (message as { error?: { code?: unknown; message?: unknown } }).error;
  if (error?.code !== INTERNAL_ERROR || typeof error.message !== 'string' || !error.message.startsWith('[')) return undefined;
  let issues: unknown;
  try {
    issues = JSON.parse(error.message);
  } catch {
    return undefined;
  }
  const fields: { path: string; problem: string }[] = [];
  for (const issue of Array.isArray(issues) ? issues : [undefined]) {
    const { path, message: problem } = (typeof issue === 'object' && issue !== null ? issue : {}) as { path?: unknown; message?: unknown };
    if (!Array.isArray(path) || path[0] !== 'params' || typeof problem !== 'string') return undefined;
    fields.push({ path: path.map(String).join('.'), problem });
  }
  if (fields.length === 0) return undefined;
  const text = `invalid params: ${fields.map((f) => `${f.path}: ${f.problem}`).join('; ')}`;
  return { ...message, error: { code: INVALID_PARAMS, message: text, data: { fields } } } as JSONRPCMessage;
}

function lastBytes(b: Buffer, n: number): Buffer {
  return b.length <= n ? b : b.subarray(b.length - n);
}
