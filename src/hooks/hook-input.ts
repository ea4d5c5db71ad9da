// One hook event as the agent sent it: stdin read with a size cap, parsed and validated field by field
// against a small schema (every byte is untrusted). Produces the agent-neutral `HookEvent` the runner
// acts on, or a `HookRejection` naming what was wrong — nothing is recorded from a rejected event.
import { createHash } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { actionOf, type AgentSpec, type HookAction } from './agent-spec.js';
import { patchPaths } from './patch-paths.js';

/** Hook JSON larger than this is rejected unread (a Write of a larger file is recorded by the next scan). */
export const MAX_HOOK_INPUT_BYTES = 8 * 1024 * 1024;
/** Longest prompt kept on a turn (characters); longer ones are cut and marked. */
export const MAX_PROMPT_CHARS = 64 * 1024;

export interface HookEvent {
  agent: string;
  /** The agent's event name (`PreToolUse`). */
  name: string;
  action: HookAction;
  sessionId: string;
  cwd: string;
  transcriptPath?: string;
  toolName?: string;
  toolInput?: Record<string, unknown>;
  callId?: string;
  prompt?: string;
  source?: string;
  trigger?: string;
  compactInstructions?: string;
}

export class HookRejection extends Error {
  /** `INVALID_ARGUMENT` (bad JSON, wrong types, too large) or `PATH_ESCAPE`. */
  readonly code: 'INVALID_ARGUMENT' | 'PATH_ESCAPE';
  readonly reason: string;
  constructor(code: 'INVALID_ARGUMENT' | 'PATH_ESCAPE', reason: string, message: string) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

/** Reads a stream to its end, keeping at most `max` bytes (the rest is drained so the writer never sees EPIPE). */
export async function readCapped(stream: NodeJS.ReadableStream | AsyncIterable<Uint8Array | string>, max = MAX_HOOK_INPUT_BYTES): Promise<{ data: Buffer; tooLarge: boolean; bytes: number }> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let bytes = 0;
  const take = (chunk: Uint8Array | string): void => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    bytes += buf.length;
    if (kept + buf.length <= max) {
      chunks.push(buf);
      kept += buf.length;
    }
  };
  if ('on' in stream) {
    // Events rather than `for await` on a Node stream: its async iterator costs a hook call more than the read.
    const node = stream;
    await new Promise<void>((resolve, reject) => {
      let ended = false;
      node.on('data', take);
      node.once('end', () => {
        ended = true;
        resolve();
      });
      node.once('error', reject);
      node.once('close', () => ended || reject(new Error('hook input closed before its end')));
    });
  } else {
    for await (const chunk of stream) take(chunk);
  }
  return { data: Buffer.concat(chunks), tooLarge: bytes > max, bytes };
}

const reject = (reason: string, message: string) => new HookRejection('INVALID_ARGUMENT', reason, message);

/** Parses and validates one hook event of `spec`'s agent. Throws HookRejection. */
export function parseHookEvent(spec: AgentSpec, raw: { data: Buffer; tooLarge: boolean; bytes: number }): HookEvent {
  if (raw.tooLarge) throw reject('input-too-large', `hook input of ${raw.bytes} bytes is over the ${MAX_HOOK_INPUT_BYTES}-byte cap`);
  let value: unknown;
  try {
    value = JSON.parse(raw.data.toString('utf8'));
  } catch {
    throw reject('malformed-json', 'hook input is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw reject('not-an-object', 'hook input is not a JSON object');
  const v = value as Record<string, unknown>;
  const f = spec.fields;

  const name = str(v, f.event, { required: true, max: 128 })!;
  let action = actionOf(spec, name);
  let sessionId = str(v, f.sessionId, { required: true, max: 1024 })!;
  // A subagent works inside its parent's turn: its tool calls are the parent session's, the rest is not the user's.
  const parent = f.parentSessionId === undefined ? undefined : str(v, f.parentSessionId, { max: 1024 });
  if (parent !== undefined && parent !== '' && parent !== sessionId) {
    sessionId = parent;
    if (action !== 'before-tool' && action !== 'after-tool') action = 'none';
  }
  // Cursor sends cwd with tool events only; every event names the workspace folders.
  const cwd = (f.roots && v[f.cwd] === undefined ? firstRoot(v, f.roots) : undefined) ?? str(v, f.cwd, { required: true, max: 4096 })!;
  if (!isAbsolute(cwd) || cwd.includes('\0')) throw reject('bad-cwd', `${f.cwd} must be an absolute path`);
  const event: HookEvent = { agent: spec.name, name, action, sessionId, cwd };
  // Null where the agent keeps no transcript (Codex `exec --ephemeral`).
  const transcriptPath = str(v, f.transcriptPath, { max: 4096, nullable: true });
  if (transcriptPath !== undefined) event.transcriptPath = transcriptPath;

  if (action === 'before-tool' || action === 'after-tool') {
    // An event that stands for one tool (Cursor's shell and file-edit events) names none itself.
    const implied = spec.events[name]!.tool;
    event.toolName = implied !== undefined && v[f.toolName] === undefined ? implied : str(v, f.toolName, { required: true, max: 256 });
    let input = v[f.toolInput];
    // Some agents send the tool's arguments as JSON text (Copilot's documented toolArgs, Cursor's MCP calls).
    if (typeof input === 'string') {
      try {
        input = JSON.parse(input);
      } catch {
        throw reject('bad-tool-input', `${f.toolInput} is text that is not JSON`);
      }
    }
    if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input))) {
      throw reject('bad-tool-input', `${f.toolInput} must be an object`);
    }
    event.toolInput = (input as Record<string, unknown> | undefined) ?? {};
    // Agents without a tool-call id (Gemini CLI) send the same name and input before and after the
    // call: a hash of both pairs a settle with its capture.
    const callId = str(v, f.callId, { max: 256 }) ?? `h:${createHash('sha256').update(JSON.stringify([event.toolName, event.toolInput])).digest('hex').slice(0, 32)}`;
    event.callId = callId;
  } else if (action === 'turn') {
    const prompt = str(v, f.prompt, { max: Infinity });
    if (prompt !== undefined && spec.syntheticPrompt?.test(prompt)) event.action = 'none';
    else if (prompt !== undefined) event.prompt = prompt.length > MAX_PROMPT_CHARS ? `${prompt.slice(0, MAX_PROMPT_CHARS)}…` : prompt;
  } else if (action === 'session-start') {
    const source = str(v, f.source, { max: 64 });
    if (source !== undefined) event.source = source;
  } else if (action === 'compaction') {
    const trigger = str(v, f.trigger, { max: 64 });
    if (trigger !== undefined) event.trigger = trigger;
    const instructions = str(v, f.compactInstructions, { max: Infinity, nullable: true });
    if (instructions) event.compactInstructions = instructions.slice(0, 4096);
  }
  return event;
}

/** Most paths one tool input field may list (VS Code's `files`): more is no edit ckpt captures file by file. */
const MAX_LISTED_PATHS = 1000;

/** The paths a tool's input names in `fields` (each a non-empty path string, or a list of them, when present). */
export function pathsOf(input: Record<string, unknown>, fields: readonly string[]): string[] {
  const out: string[] = [];
  for (const field of fields) {
    const value = input[field];
    if (value === undefined || value === null) continue;
    const list = Array.isArray(value) ? value : [value];
    if (list.length > MAX_LISTED_PATHS) throw reject('bad-path', `tool input field ${field} lists more than ${MAX_LISTED_PATHS} paths`);
    for (const path of list) {
      if (typeof path !== 'string' || path.length === 0 || path.length > 4096 || path.includes('\0')) {
        throw reject('bad-path', `tool input field ${field} must be a non-empty path string or a list of them`);
      }
      out.push(path);
    }
  }
  return out;
}

/** The first of a list of workspace folders (Cursor's `workspace_roots`), or undefined when the field is absent. */
function firstRoot(v: Record<string, unknown>, field: string): string | undefined {
  const roots = v[field];
  if (roots === undefined) return undefined;
  if (!Array.isArray(roots) || typeof roots[0] !== 'string' || roots[0].length === 0 || roots[0].length > 4096) {
    throw reject('bad-cwd', `${field} must be a list of workspace folders`);
  }
  return roots[0];
}

/**
 * The files a file tool of `spec` names in its input, or undefined when `tool` is not a file tool (or is
 * a patch tool whose text is no patch): then it is recorded by a scan after it runs.
 */
export function fileToolPaths(spec: AgentSpec, tool: string, input: Record<string, unknown>): string[] | undefined {
  if (Object.hasOwn(spec.fileTools, tool)) return pathsOf(input, spec.fileTools[tool]!);
  if (!spec.patchTools || !Object.hasOwn(spec.patchTools, tool)) return undefined;
  const field = spec.patchTools[tool]!;
  const patch = input[field];
  if (typeof patch !== 'string') throw reject('bad-patch', `tool input field ${field} must be a patch string`);
  const parsed = patchPaths(patch);
  if (!parsed.isPatch) return undefined;
  for (const path of parsed.paths) {
    if (path.length > 4096 || path.includes('\0')) throw reject('bad-path', `a file header of ${field} names no usable path`);
  }
  return parsed.paths;
}

function str(v: Record<string, unknown>, key: string, opts: { required?: boolean; max: number; nullable?: boolean }): string | undefined {
  const value = v[key];
  if (value === undefined || (opts.nullable && value === null)) {
    if (opts.required) throw reject('missing-field', `hook input lacks ${key}`);
    return undefined;
  }
  if (typeof value !== 'string') throw reject('wrong-type', `hook input field ${key} must be a string, got ${value === null ? 'null' : typeof value}`);
  if (opts.required && value.length === 0) throw reject('empty-field', `hook input field ${key} is empty`);
  if (value.length > opts.max) throw reject('field-too-long', `hook input field ${key} is longer than ${opts.max} characters`);
  return value;
}
