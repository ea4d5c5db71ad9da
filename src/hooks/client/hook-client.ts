// The thin hook client (DESIGN §10 "Hooks at no cost"): what an agent's command hook runs first. It
// loads only Node's built-ins — never the engine — reads the event, and forwards it to the store's
// running daemon (`POST /hooks/<agent>`, the daemon's token from the store), printing the daemon's
// answer as the hook's output. When no daemon answers it hands the event back to its caller, which
// records it in-process (hook-main.ts): slower, never lost; that fallback says so once per outage
// (a note file in the store, removed by the next daemon's start). With `--daemon` (what `ckpt init`
// installs) a once-per-prompt event (session start, prompt, stop) also starts the daemon on demand,
// detached, exiting by itself after an idle time.
//
// Interface for other agents' adapters: `parseHookArgs(argv)` then `hookClient(args, io)`; an answer
// with `exitCode` is final, one with `input` must be recorded in-process by the caller. Agents whose
// once-per-prompt events have other names add them to START_EVENTS.
import { spawn } from 'node:child_process';
import { closeSync, constants, lstatSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_MAX_BLOB_BYTES, sizeBytes } from '../../size-cap.js';
import { processStatus } from '../../process-alive.js';
import { httpHookPort, promptHookIsHttp, squattedHookPort, squattedText } from './squatted-port.js';

export interface HookArgs {
  agent: string;
  store?: string;
  workspace?: string;
  /** Start the daemon on demand at a once-per-prompt event (`ckpt hook <agent> --daemon`, installed by `ckpt init`). */
  daemon?: boolean;
}

export interface ClientIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The ckpt entry script (bin/ckpt.js), to start the daemon with. */
  script?: string;
}

/** Either the hook is done (`exitCode`), or the caller records `input` in-process and shows `note` (when set). */
export type ClientAnswer = { exitCode: number } | { input: { data: Buffer; tooLarge: boolean; bytes: number }; note?: string };

/** The same cap as hook-input.ts (kept apart so that this module imports nothing of ckpt). */
const MAX_INPUT_BYTES = 8 * 1024 * 1024;
/** Events after which the daemon is started when it is down: they come once per prompt, not per tool call. */
export const START_EVENTS: ReadonlySet<string> = new Set(['SessionStart', 'UserPromptSubmit', 'Stop', 'PreCompact', 'BeforeAgent', 'AfterAgent', 'PreCompress', 'sessionStart', 'userPromptSubmitted', 'agentStop', 'beforeSubmitPrompt', 'stop', 'preCompact', 'session.start', 'chat.message', 'session.compacting']);
/** Agents that read a JSON answer from every hook, `{}` included (their tables' `quietAnswer`; test: hooks/agent-tables.test.ts). */
export const JSON_ANSWER_AGENTS: ReadonlySet<string> = new Set(['cursor']);
/** How long the daemon started on demand lives without a request (seconds): 30 minutes, or CKPT_DAEMON_IDLE_EXIT. */
export function idleExitSeconds(env: NodeJS.ProcessEnv): number {
  const s = Number(env.CKPT_DAEMON_IDLE_EXIT);
  return Number.isFinite(s) && s > 0 ? s : 30 * 60;
}
const CONNECT_TIMEOUT_MS = 1000;
/** A hook waits this long for the daemon's answer (a scan of a big tree can take a while). */
const ANSWER_TIMEOUT_MS = 120_000;
export const FALLBACK_NOTE_FILE = join('daemon', 'fallback-noted');

/** The hook call in `argv` (`[--store DIR] [--workspace DIR] hook <agent> [--daemon]`), or undefined for anything else. */
export function parseHookArgs(argv: readonly string[]): HookArgs | undefined {
  const flags: Record<string, string> = {};
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--(store|workspace)(?:=(.*))?$/.exec(arg);
    if (!m) break;
    const value = m[2] ?? argv[++i];
    if (value === undefined) return undefined;
    flags[m[1]!] = value;
  }
  if (argv[i] !== 'hook' || argv[i + 1] === undefined || argv[i + 1]!.startsWith('-')) return undefined;
  const rest = argv.slice(i + 2);
  if (rest.length > 1 || (rest.length === 1 && rest[0] !== '--daemon')) return undefined;
  return { agent: argv[i + 1]!, ...flags, ...(rest.length === 1 ? { daemon: true } : {}) };
}

/** The store folder as the engine finds it (store.ts defaultStoreDir / storeLocation); undefined for a shared store URL. */
export function storeFolder(args: HookArgs, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const given = args.store ?? env.CKPT_STORE;
  if (given !== undefined) return /^postgres(ql)?:\/\//i.test(given) ? undefined : resolve(cwd, given);
  if (env.CKPT_HOME) return resolve(env.CKPT_HOME);
  if (env.XDG_DATA_HOME) return join(resolve(env.XDG_DATA_HOME), 'ckpt');
  return join(homedir(), '.local', 'share', 'ckpt');
}

/** Strict mode (`CKPT_HOOK_STRICT=1`): a hook's failure blocks the agent's tool call instead of warning. */
/** A CKPT_* switch set on, as store.ts reads them. */
export function switchOn(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value);
}

export function strictHooks(env: NodeJS.ProcessEnv): boolean {
  return switchOn(env.CKPT_HOOK_STRICT);
}

export async function hookClient(args: HookArgs, io: ClientIo): Promise<ClientAnswer> {
  const input = await readInput(io.stdin);
  const store = storeFolder(args, io.env, io.cwd);
  if (!store || input.tooLarge || switchOn(io.env.CKPT_NO_DAEMON)) return { input };
  const { running: daemon, stopped, gone } = readClaim(store);
  // A size cap other than the daemon's (CKPT_MAX_FILE_SIZE here, or where it started): it would record
  // with its own. Recorded here, with the cap asked for.
  if (daemon && ownSizeCap(io.env) !== daemon.maxBlobBytes) return { input };
  const event = eventName(input.data);
  if (daemon) {
    const answer = await post(daemon, args, io.env, input.data).catch(() => undefined);
    if (answer?.status === 200) return { exitCode: writeAnswer(answer.body, io, JSON_ANSWER_AGENTS.has(args.agent)) };
  }
  // No daemon answered: record in-process. Start one for the next events when this is a once-per-prompt one.
  const starts = args.daemon && io.script && event !== undefined && START_EVENTS.has(event);
  // The store's own daemon, stopped (Ctrl-Z, SIGSTOP): it still holds its port, so that listener is
  // ckpt's, not a squatter — but the agent's HTTP hooks post there and Claude Code waits for each (a
  // tool call's for minutes: measured over 300 s). A prompt's hook stops the prompt and says why and
  // how to go on; a command-hook install just records in-process.
  if (stopped && starts && httpHookPort(args.agent, io.env) === stopped.port) {
    const text = stoppedText(args.agent, stopped.pid);
    if (event === 'UserPromptSubmit') {
      io.stderr.write(`${text}\n`);
      return { exitCode: 2 };
    }
    return { input, note: text };
  }
  if (starts && !stopped) startDaemon(store, io.script!, io.env, idleExitSeconds(io.env));
  // None runs, yet the port the agent's HTTP hooks post to answers: not ckpt's (squatted-port.ts).
  const squatted = starts && !daemon && !stopped ? await squattedHookPort(args.agent, io.env, () => readDaemon(store)?.port) : undefined;
  if (squatted !== undefined) {
    const text = squattedText(args.agent, squatted);
    if (event === 'UserPromptSubmit') {
      io.stderr.write(`${text}\n`);
      return { exitCode: 2 }; // a prompt's hook stops the prompt this way
    }
    return { input, note: text };
  }
  // A session's start that started the daemon, under `init --http`: the agent's next events — its
  // first prompt's among them — are HTTP hooks to the daemon's port, which fail (silently) until it listens. Wait for it
  // (a start takes ~0.2–1 s) and answer through it, so that the prompt after it is recorded.
  if (starts && !daemon && event === 'SessionStart' && promptHookIsHttp(args.agent, io.env) && !stopped) {
    const up = await waitForDaemon(store, DAEMON_START_WAIT_MS);
    const answer = up && (await post(up, args, io.env, input.data).catch(() => undefined));
    if (answer && answer.status === 200) return { exitCode: writeAnswer(answer.body, io, JSON_ANSWER_AGENTS.has(args.agent)) };
  }
  // The note is for a daemon that went away (its claim left behind by a kill or a crash), or one a
  // later event still finds missing: an event that starts the first one (a fresh install's first
  // session start, after an idle exit) says nothing — "not running … until it is back" on a fresh
  // install read as a fault (a Gemini probe).
  return { input, ...(args.daemon && (!starts || gone) ? noteOnce(store) : {}) };
}

/** How long a session's start waits for the daemon it started before recording in-process. */
const DAEMON_START_WAIT_MS = 5_000;

async function waitForDaemon(store: string, ms: number): Promise<Daemon | undefined> {
  const until = Date.now() + ms;
  for (;;) {
    const d = readDaemon(store);
    if (d || Date.now() >= until) return d;
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Daemon {
  host?: string;
  port?: number;
  socket?: string;
  token: string;
  /** The size cap it records with (older claims say none: the default). */
  maxBlobBytes: number;
}

/** This hook's size cap: CKPT_MAX_FILE_SIZE, else the default; NaN for a value that is no size (the in-process hook reports it). */
function ownSizeCap(env: NodeJS.ProcessEnv): number {
  const text = env.CKPT_MAX_FILE_SIZE;
  return text === undefined || text === '' ? DEFAULT_MAX_BLOB_BYTES : (sizeBytes(text) ?? NaN);
}

/** The running daemon's address (its claim, when its process lives) and the store's token. */
function readDaemon(store: string): Daemon | undefined {
  return readClaim(store).running;
}

/**
 * The store's daemon claim in one read and one process check: `running` (its address and the store's
 * token) when its process runs; `stopped` when it is alive but stopped (Ctrl-Z, SIGSTOP: it listens,
 * it answers nothing, and would take the whole answer timeout to say so — recorded in-process instead).
 */
function readClaim(store: string): { running?: Daemon; stopped?: { pid: number; port?: number }; gone?: true } {
  try {
    const claim = JSON.parse(readFileSync(join(store, 'daemon', 'daemon.json'), 'utf8')) as { pid?: unknown; host?: unknown; port?: unknown; socket?: unknown; maxBlobBytes?: unknown };
    if (typeof claim.pid !== 'number') return {};
    const status = processStatus(claim.pid);
    if (status === 'stopped') return { stopped: { pid: claim.pid, ...(typeof claim.port === 'number' ? { port: claim.port } : {}) } };
    // A claim whose process is gone: the daemon ended without its clean exit (killed, crashed).
    if (status !== 'running') return { gone: true };
    const token = readFileSync(join(store, 'daemon', 'token'), 'utf8').trim();
    if (!/^[0-9a-f]{64}$/.test(token)) return {};
    const maxBlobBytes = typeof claim.maxBlobBytes === 'number' ? claim.maxBlobBytes : DEFAULT_MAX_BLOB_BYTES;
    if (typeof claim.socket === 'string') return { running: { socket: claim.socket, token, maxBlobBytes } };
    if (typeof claim.port !== 'number') return {};
    const host = typeof claim.host === 'string' && claim.host !== '0.0.0.0' && claim.host !== '::' ? claim.host : '127.0.0.1';
    return { running: { host, port: claim.port, token, maxBlobBytes } };
  } catch {
    return {};
  }
}

/** What the client says when the agent's HTTP hooks post to the store's stopped daemon (a prompt's hook: and stops it). */
function stoppedText(agent: string, pid: number): string {
  return `ckpt: its daemon (pid ${pid}) is stopped (Ctrl-Z or SIGSTOP), and this ${agent === 'claude' ? 'Claude Code' : agent} process sends its tool calls' HTTP hooks to it: each tool call would wait for it. Continue it (\`fg\` in its terminal, or \`kill -CONT ${pid}\`); until then ckpt stops each prompt.`;
}

function eventName(data: Buffer): string | undefined {
  try {
    const v = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    const name = v.hook_event_name ?? v.hookEventName ?? v.event;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** One HTTP/1.1 request over a raw socket (node:http costs a hook process a few ms more to load). */
function post(daemon: Daemon, args: HookArgs, env: NodeJS.ProcessEnv, body: Buffer): Promise<{ status: number; body: string }> {
  const query = args.workspace ? `?workspace=${encodeURIComponent(resolve(args.workspace))}` : '';
  const projectEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (k.endsWith('_PROJECT_DIR') && v) projectEnv[k] = v;
  if (strictHooks(env)) projectEnv.CKPT_HOOK_STRICT = '1';
  const head = [
    `POST /hooks/${encodeURIComponent(args.agent)}${query}${projectEnv.CKPT_HOOK_STRICT ? `${query ? '&' : '?'}strict=1` : ''} HTTP/1.1`,
    'Host: 127.0.0.1',
    `Authorization: Bearer ${daemon.token}`,
    'Content-Type: application/json',
    `Content-Length: ${body.length}`,
    `X-Ckpt-Hook-Env: ${encodeURIComponent(JSON.stringify(projectEnv))}`,
    // The daemon does not see the agent's environment: capture switched off there is switched off here.
    ...(switchOn(env.CKPT_DISABLE) ? ['X-Ckpt-Disable: 1'] : []),
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  return new Promise((resolvePost, reject) => {
    const socket: Socket = daemon.socket ? connect(daemon.socket) : connect(daemon.port!, daemon.host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('connect timeout')), CONNECT_TIMEOUT_MS);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.setTimeout(ANSWER_TIMEOUT_MS, () => socket.destroy(new Error('answer timeout')));
      // Not end(): node's server drops a half-closed request unanswered. It closes after answering (Connection: close).
      socket.write(head);
      socket.write(body);
    });
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.once('error', reject);
    socket.once('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(text);
      if (!m) return reject(new Error('no HTTP answer'));
      const chunked = /^transfer-encoding:\s*chunked/im.test(m[2]!);
      resolvePost({ status: Number(m[1]), body: chunked ? dechunk(m[3]!) : m[3]! });
    });
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const m = /^([0-9a-f]+)[^\r\n]*\r\n/i.exec(rest);
    if (!m) return out;
    const size = parseInt(m[1]!, 16);
    if (size === 0) return out;
    out += rest.slice(m[0].length, m[0].length + size);
    rest = rest.slice(m[0].length + size + 2);
  }
}

/** The daemon's answer as a command hook's output: its JSON on stdout, or strict mode's block as exit 2. */
function writeAnswer(body: string, io: ClientIo, always: boolean): number {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return 0;
  }
  if (v.decision === 'block' && typeof v.reason === 'string') {
    io.stderr.write(`${v.reason}\n`);
    return 2;
  }
  if (always || Object.keys(v).length > 0) io.stdout.write(`${body}\n`);
  return 0;
}

async function readInput(stdin: NodeJS.ReadableStream): Promise<{ data: Buffer; tooLarge: boolean; bytes: number }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += b.length;
    if (bytes <= MAX_INPUT_BYTES) chunks.push(b);
  }
  return { data: Buffer.concat(chunks), tooLarge: bytes > MAX_INPUT_BYTES, bytes };
}

/** Starts `ckpt serve --idle-exit S --no-login-url` for the store, detached; a second start while one runs exits at once (LOCKED). */
export function startDaemon(given: string, script: string, env: NodeJS.ProcessEnv, idleSeconds: number): void {
  const store = resolve(given);
  let log: number | 'ignore' = 'ignore';
  try {
    const dir = join(store, 'daemon');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // No write through a link planted below the store root (DESIGN §6; an agent can plant one when
    // the store lies in its workspace): the folder must be a folder, and the file is opened O_NOFOLLOW.
    if (!lstatSync(dir).isDirectory()) throw new Error(`${dir} is not a folder`);
    log = openSync(join(dir, 'serve.log'), constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0), 0o600);
  } catch {
    // no log then
  }
  try {
    // --no-login-url: its output goes to serve.log, which must not hold a one-time login code.
    const child = spawn(process.execPath, [resolve(script), '--store', store, 'serve', '--idle-exit', String(idleSeconds), '--no-login-url'], {
      // In the store, not the project the hook ran in: a project removed and cloned again in place
      // left the daemon in a deleted folder, and every full scan it ran failed there (a probe).
      cwd: store,
      detached: true,
      stdio: ['ignore', log, log],
      env,
    });
    child.unref();
  } catch {
    // the in-process path records this event; the next once-per-prompt event tries again
  } finally {
    if (typeof log === 'number') closeSync(log);
  }
}

/** The fallback's note, once per outage: the first hook that finds no daemon writes the note file and says so. */
function noteOnce(store: string): { note?: string } {
  try {
    writeFileSync(join(store, FALLBACK_NOTE_FILE), `${new Date().toISOString()}\n`, { flag: 'wx', mode: 0o600 });
  } catch {
    return {};
  }
  return { note: 'ckpt: its daemon is not running, so hooks record in-process (slower) until it is back; HTTP hooks wait for it and the next prompt re-scans the workspace' };
}
