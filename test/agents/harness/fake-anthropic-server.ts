// A scripted fake of the Anthropic Messages API on loopback, for driving the real Claude Code CLI
// offline. Claude Code only calls `POST /v1/messages?beta=true` with `stream: true`; every answer is
// an SSE stream (message_start, content_block_start / content_block_delta with text_delta or
// input_json_delta / content_block_stop, message_delta with stop_reason, message_stop).
//
// A test scripts the model per prompt: `server.script([[call, call], [call], …])` queues the steps the
// model takes for the next prompt — each step is one assistant message holding those tool calls (in
// parallel). Each request of the agent's main loop (one that offers tools) answers with the next
// queued step; once the queue is empty it answers a final text with `stop_reason: "end_turn"`.
// Requests without tools (the summary of `/compact`, titles, …) answer a short text. Every request
// is kept (`requests`) so a test can look at what the agent sent (tool results, errors).
// Reused by the bench (`agent-tool-call`) and by the suites of other agents that speak this API.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One tool call of the model: the tool's name and its input, exactly as the model would send it. */
export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

/** One assistant message: tool calls made together (optionally with some text before them). */
export type Step = ToolCall[] | { text?: string; calls: ToolCall[] };

export interface RecordedRequest {
  path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** What the server answered: a step's tool calls, or a final text. */
  answered: { calls: ToolCall[] } | { text: string };
  /** When the request arrived and when its answer was fully sent (performance.now() ms): the bench's agent-tool-call. */
  at: number;
  answeredAt?: number;
  /** Whether it came from the agent's main loop (it offered tools). */
  mainLoop: boolean;
}

export interface FakeAnthropic {
  /** `http://127.0.0.1:PORT` — the value for ANTHROPIC_BASE_URL. */
  url: string;
  /** Queues the model's steps for the next prompt (appends to what is still queued). */
  script(steps: Step[], finalText?: string): void;
  /** Steps still queued (a test checks the agent consumed its whole script). */
  pending(): number;
  /** Drops the steps still queued (a prompt the agent never sent, e.g. one a hook stopped); returns how many. */
  drop(): number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Bash / Write / Edit call builders, so scripts read like what the model does. */
export const tool = {
  write: (file_path: string, content: string): ToolCall => ({ name: 'Write', input: { file_path, content } }),
  edit: (file_path: string, old_string: string, new_string: string): ToolCall => ({ name: 'Edit', input: { file_path, old_string, new_string } }),
  read: (file_path: string): ToolCall => ({ name: 'Read', input: { file_path } }),
  bash: (command: string, description = 'run a command'): ToolCall => ({ name: 'Bash', input: { command, description } }),
};

export async function startFakeAnthropic(options: { log?: (line: string) => void } = {}): Promise<FakeAnthropic> {
  const queue: { calls: ToolCall[]; text?: string }[] = [];
  let finalText = 'Done.';
  const requests: RecordedRequest[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    const at = performance.now();
    for await (const c of req) chunks.push(c as Buffer);
    const path = req.url ?? '/';
    if (req.method !== 'POST' || !path.startsWith('/v1/messages')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${path}` } }));
      return;
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (path.startsWith('/v1/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 100 }));
      return;
    }
    const mainLoop = Array.isArray(body.tools) && body.tools.length > 0;
    const step = mainLoop ? queue.shift() : undefined;
    const answered: RecordedRequest['answered'] = step ? { calls: step.calls } : { text: mainLoop ? finalText : 'Summary: the user and the assistant edited files in the project.' };
    const recorded: RecordedRequest = { path, body, answered, at, mainLoop };
    requests.push(recorded);
    options.log?.(`${mainLoop ? 'main' : 'side'} request -> ${step ? step.calls.map((c) => c.name).join(',') : 'text'}`);
    const model = typeof body.model === 'string' ? body.model : 'claude-sonnet-4-5';
    const blocks: Block[] = [];
    if (step?.text) blocks.push({ type: 'text', text: step.text });
    if (step) for (const call of step.calls) blocks.push({ type: 'tool_use', id: `toolu_${randomBytes(12).toString('hex')}`, name: call.name, input: call.input });
    else blocks.push({ type: 'text', text: (answered as { text: string }).text });
    const stopReason = step && step.calls.length > 0 ? 'tool_use' : 'end_turn';
    if (body.stream === false) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(message(model, blocks, stopReason)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send('message_start', { type: 'message_start', message: { ...message(model, [], null), usage: { input_tokens: 50, output_tokens: 1 } } });
    blocks.forEach((b, index) => {
      if (b.type === 'text') {
        send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
      } else {
        send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
        // The input arrives in pieces, as the real API streams it.
        const json = JSON.stringify(b.input);
        const half = Math.ceil(json.length / 2);
        for (const part of [json.slice(0, half), json.slice(half)]) {
          if (part) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } });
        }
      }
      send('content_block_stop', { type: 'content_block_stop', index });
    });
    send('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } });
    send('message_stop', { type: 'message_stop' });
    res.end(() => (recorded.answeredAt = performance.now()));
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      options.log?.(`fake server error: ${String(e)}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    script(steps, text) {
      for (const s of steps) queue.push(Array.isArray(s) ? { calls: s } : s);
      if (text !== undefined) finalText = text;
    },
    pending: () => queue.length,
    drop: () => queue.splice(0).length,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function message(model: string, content: unknown[], stopReason: string | null) {
  return {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 50, output_tokens: 20 },
  };
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };
