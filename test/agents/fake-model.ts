// A scripted fake model server on loopback for driving real agent CLIs offline: it speaks the
// streaming wire format the agent uses (OpenAI Responses API SSE for Codex, Chat Completions SSE for
// opencode and Copilot CLI, Gemini's streamGenerateContent SSE) and answers each request from a script
// keyed by the user's prompt text: the n-th request after that prompt (n = tool results seen since it)
// gets the n-th step — one tool call, or the closing text. Requests without tools (titles, summaries)
// and requests naming no scripted prompt get a short text, so the agent's side calls never derail a run.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Step = { tool: string; args: Record<string, unknown> } | { custom: string; input: string } | { text: string };
export type Script = Record<string, Step[]>;
export type Wire = 'responses' | 'chat' | 'gemini';

type Entry = { user: string } | { result: true };

interface Seen {
  /** The user messages and tool results of the request, in order. */
  entries: Entry[];
  hasTools: boolean;
}

export interface FakeModel {
  url: string;
  port: number;
  /** Every request's path and parsed body, for debugging a run; when it arrived and when its answer ended (ms since the epoch). */
  requests: { path: string; body: unknown; at: number; answered?: number }[];
  close(): Promise<void>;
}

export async function startFakeModel(wire: Wire, script: Script): Promise<FakeModel> {
  const requests: FakeModel['requests'] = [];
  let seq = 0;
  const server: Server = createServer(async (req, res) => {
    const at = Date.now();
    const raw = await body(req);
    let parsed: unknown = undefined;
    try {
      parsed = raw ? JSON.parse(raw) : undefined;
    } catch {
      /* not JSON */
    }
    const entry: FakeModel['requests'][number] = { path: req.url ?? '', body: parsed, at };
    requests.push(entry);
    if (req.method !== 'POST' || typeof parsed !== 'object' || parsed === null) {
      res.writeHead(req.url?.includes('/models') ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [], object: 'list' }));
      return;
    }
    const step = nextStep(script, SEEN[wire](parsed as Record<string, unknown>));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(WRITE[wire](step, ++seq), () => (entry.answered = Date.now()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function nextStep(script: Script, seen: Seen): Step {
  if (!seen.hasTools) return { text: 'ok' };
  for (let i = seen.entries.length - 1; i >= 0; i--) {
    const e = seen.entries[i]!;
    if (!('user' in e)) continue;
    const prompt = Object.keys(script).find((p) => e.user.includes(p));
    if (prompt === undefined) continue;
    const n = seen.entries.slice(i + 1).filter((x) => 'result' in x).length;
    return script[prompt]![n] ?? { text: 'done' };
  }
  return { text: 'ok' };
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let b = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (b += d));
    req.on('end', () => resolve(b));
    req.on('error', reject);
  });
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => (typeof p === 'object' && p && 'text' in p ? String((p as { text: unknown }).text) : '')).join('\n') : '';

const SEEN: Record<Wire, (b: Record<string, unknown>) => Seen> = {
  responses: (b) => ({
    hasTools: Array.isArray(b.tools) && b.tools.length > 0,
    entries: (Array.isArray(b.input) ? b.input : []).flatMap((it: Record<string, unknown>): Entry[] =>
      it.type === 'function_call_output' || it.type === 'custom_tool_call_output' ? [{ result: true as const }] : it.role === 'user' ? [{ user: textOf(it.content) }] : [],
    ),
  }),
  chat: (b) => ({
    hasTools: Array.isArray(b.tools) && b.tools.length > 0,
    entries: (Array.isArray(b.messages) ? b.messages : []).flatMap((m: Record<string, unknown>): Entry[] => (m.role === 'tool' ? [{ result: true as const }] : m.role === 'user' ? [{ user: textOf(m.content) }] : [])),
  }),
  gemini: (b) => ({
    hasTools: Array.isArray(b.tools) && b.tools.length > 0,
    entries: (Array.isArray(b.contents) ? b.contents : []).flatMap((c: { role?: string; parts?: Record<string, unknown>[] }): Entry[] =>
      (c.parts ?? []).flatMap((p): Entry[] => (p.functionResponse ? [{ result: true as const }] : c.role === 'user' && typeof p.text === 'string' ? [{ user: p.text }] : [])),
    ),
  }),
};

const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

const WRITE: Record<Wire, (step: Step, seq: number) => string> = {
  responses(step, seq) {
    const id = `resp_${seq}`;
    const item =
      'text' in step
        ? { type: 'message', role: 'assistant', id: `msg_${seq}`, content: [{ type: 'output_text', text: step.text, annotations: [] }] }
        : 'custom' in step
          ? { type: 'custom_tool_call', id: `ctc_${seq}`, call_id: `call_${seq}`, name: step.custom, input: step.input }
          : { type: 'function_call', id: `fc_${seq}`, call_id: `call_${seq}`, name: step.tool, arguments: JSON.stringify(step.args) };
    const usage = { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
    return [
      sse({ type: 'response.created', response: { id } }, 'response.created'),
      sse({ type: 'response.output_item.added', output_index: 0, item }, 'response.output_item.added'),
      sse({ type: 'response.output_item.done', output_index: 0, item }, 'response.output_item.done'),
      sse({ type: 'response.completed', response: { id, usage } }, 'response.completed'),
    ].join('');
  },
  chat(step, seq) {
    const base = { id: `chatcmpl-${seq}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: 'fake' };
    const chunks: unknown[] = [];
    if ('text' in step) {
      chunks.push({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: step.text }, finish_reason: null }] });
      chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    } else {
      const [name, args] = 'custom' in step ? [step.custom, JSON.stringify({ input: step.input })] : [step.tool, JSON.stringify(step.args)];
      chunks.push({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: `call_${seq}`, type: 'function', function: { name, arguments: args } }] }, finish_reason: null }] });
      chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    }
    chunks.push({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    return chunks.map((c) => sse(c)).join('') + 'data: [DONE]\n\n';
  },
  gemini(step) {
    const part = 'text' in step ? { text: step.text } : 'custom' in step ? { text: step.input } : { functionCall: { name: step.tool, args: step.args } };
    return sse({
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: 'gemini-2.5-flash',
    });
  },
};
