// Runs one agent hook event (DESIGN §9 `ckpt hook <agent>`): validate the event, find or create the
// ckpt session tied to the agent's session, and do what the agent's table says (turn, capture,
// settle, scan, compaction). A hook never breaks the agent: every failure becomes exit 0 with a short
// JSON `systemMessage` the agent shows its user, and the details go to the store's hook log. Only
// with CKPT_HOOK_STRICT=1 does a failure exit 2, which makes Claude Code block the tool call — and
// only for a tool call whose before-image could not be recorded (a before-tool event): a prompt, a
// settle, a scan after the tool or a lifecycle event only ever warns (blocking them protects nothing).
import { dirname, isAbsolute, resolve } from 'node:path';
import { ensureBaseline, isCkptError, locateWorkspace, openStore, scanViaDaemon, Session as SessionClass, toCkptError, type AgentLink, type AgentSessionResult, type ScanResult, type Session, type Store, type Workspace } from '../index.js';
import { actionOf, type AgentSpec } from './agent-spec.js';
import { fileToolPaths, HookRejection, parseHookEvent, pathsOf, type HookEvent } from './hook-input.js';
import { appendHookLog, type HookLogEntry } from './hook-log.js';
import { strictHooks, switchOn } from './client/hook-client.js';
import { keepHooks } from './keep-hooks.js';

export interface RunHookOptions {
  spec: AgentSpec;
  input: { data: Buffer; tooLarge: boolean; bytes: number };
  env: NodeJS.ProcessEnv;
  storeDir: string;
  /** Workspace root given on the command line (default: the agent's project dir, else the event's cwd). */
  workspace?: string;
  /**
   * Without --workspace and the agent's project dir: the workspace of the event's cwd as the CLI finds
   * it (nearest folder with sessions, else the git top, else cwd), not cwd itself. HTTP hooks get no
   * environment from the agent, and the cwd they report follows the agent's `cd`.
   */
  locate?: boolean;
  /** An open store to use (the daemon's); default: open `storeDir`. */
  store?: Store;
  /** Finds or creates the session tied to the agent's session (default: the workspace's openAgentSession). */
  openSession?: (root: string, link: AgentLink) => Promise<AgentSessionResult>;
  /** Scans after a shell tool (default: through the store's daemon when one runs, else in-process). */
  scan?: (session: Session, tool: string) => Promise<ScanResult>;
  /** A failure the caller answers itself (thrown on, neither logged nor turned into the agent's answer). */
  passOn?: (err: unknown) => boolean;
}

export interface HookOutcome {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** What was recorded, for tests and `--json`-less debugging: `turn 3`, `capture 2.1`, … */
  did: string[];
  /** The agent's event name, when the input could be read that far (HTTP hooks shape their answer by it). */
  event?: string;
}

const TITLE_CHARS = 80;

export async function runHook(options: RunHookOptions): Promise<HookOutcome> {
  const { spec, env } = options;
  const strict = strictHooks(env);
  const did: string[] = [];
  const warnings: string[] = [];
  /** What the agent's user should hear that is no failure (not in the hook log). */
  const notes: string[] = [];
  let event: HookEvent | undefined;
  let store: Store | undefined;
  let session: Session | undefined;
  const openOnce = async (): Promise<Store> =>
    (store ??= options.store ?? (await openStore({ dir: options.storeDir, lockTimeoutMs: lockTimeout(env) })));
  // CKPT_DISABLE in the agent's environment (a daemon learns it from the hook's X-Ckpt-Disable header):
  // capture, settle and scans record nothing, as in the CLI; sessions, turns and the conversation are
  // still recorded. Its scan never reaches the daemon's watcher, whose touched paths it would consume.
  const captureOff = switchOn(env.CKPT_DISABLE);
  const scanSession = captureOff
    ? (s: Session, tool: string) => s.scan({ tool })
    : (options.scan ?? (async (s: Session, tool: string) => (await scanViaDaemon(await openOnce(), s, tool, env)) ?? (await s.scan({ tool }))));

  try {
    event = parseHookEvent(spec, options.input);
    if (event.action === 'none' || isPassive(spec, event)) return { exitCode: 0, stdout: spec.quietAnswer ?? '', stderr: '', did };
    const projectDir = projectRoot(spec, env, event, options.workspace);
    let root = projectDir;
    // An agent that names no project dir (Codex CLI) runs hooks in its session's cwd, maybe a subfolder;
    // one whose project dir is only the folder it started in (Gemini CLI, opencode) may have started in
    // a subfolder of its git project too: the workspace is found from there, not above the git top.
    if (!options.workspace && spec.projectDirIsStart) root = (await locateWorkspace(await openOnce(), root, { withinGitTop: true })).root;
    else if ((options.locate || spec.projectDirEnv.length === 0) && !options.workspace && root === event.cwd) root = (await locateWorkspace(await openOnce(), root)).root;
    const link = { agent: spec.name, externalId: event.sessionId, cwd: event.cwd, ...(event.transcriptPath ? { transcriptPath: event.transcriptPath } : {}) };
    // An agent that names no project dir sends a tool's own working folder as cwd (Codex: a shell call
    // with `workdir` outside the project made a second workspace there, and baselined it): once its
    // session exists, every later event goes to that session's workspace (real-Codex probe, D3).
    if (spec.projectDirEnv.length === 0 && !options.workspace && event.action !== 'session-start' && event.action !== 'turn') {
      root = (await (await openOnce()).agentSessionRoot(link, root)) ?? root;
    }
    const opened = options.openSession ? await options.openSession(root, link) : await (await (await openOnce()).openWorkspace(root)).openAgentSession(link);
    session = captureOff ? withCaptureOff(opened.session) : opened.session;
    if (opened.created) did.push(`session ${session.id}`);
    const scanned = await act(spec, event, session, did, warnings, scanSession);
    if (scanned) {
      const kept = await keepHooks(spec, session, scanned, projectDir);
      if (kept) notes.push(kept);
    }
    if (event.action === 'session-start' && event.source === 'clear' && opened.created) {
      const previous = await linkCleared(await (await openOnce()).openWorkspace(root), session, spec, event);
      if (previous) did.push(`continues ${previous}`);
    }
  } catch (err) {
    return fail(err);
  }
  const named = { event: event.name };
  if (warnings.length === 0 && notes.length > 0) return { exitCode: 0, stdout: systemMessage(`ckpt: ${notes.join('; ')}`), stderr: '', did, ...named };
  if (warnings.length === 0) return { exitCode: 0, stdout: spec.quietAnswer ?? '', stderr: '', did, ...named };
  const logNote = await log({ code: 'WARNING', message: warnings.join('; ') });
  return { exitCode: 0, stdout: systemMessage(`ckpt: ${warnings.join('; ')}${logNote}`), stderr: '', did, ...named };

  async function log(entry: Omit<HookLogEntry, 'agent' | 'event' | 'tool' | 'session'>): Promise<string> {
    const full: HookLogEntry = {
      agent: spec.name,
      ...(event ? { event: event.name } : {}),
      ...(event?.toolName ? { tool: event.toolName } : {}),
      ...(session ? { session: session.id } : {}),
      ...entry,
    };
    try {
      await appendHookLog(await openOnce(), full);
      return '';
    } catch (err) {
      return ` (the hook log could not be written either: ${toCkptError(err).message})`;
    }
  }

  async function fail(err: unknown): Promise<HookOutcome> {
    if (options.passOn?.(err)) throw err;
    const rejected = err instanceof HookRejection;
    const e = rejected ? undefined : toCkptError(err);
    const code = rejected ? err.code : e!.code;
    const message = rejected ? err.message : e!.message;
    const logNote = await log({ code, ...(rejected ? { reason: err.reason } : {}), message });
    const what = rejected ? 'ignored a hook event it could not accept' : 'could not record this step';
    const text = `ckpt ${what} [${code}]: ${message}${logNote}`;
    if (strict && blocksInStrictMode(spec, event, options.input.data)) return { exitCode: 2, stdout: '', stderr: `${text}\n`, did, ...(event ? { event: event.name } : {}) };
    return { exitCode: 0, stdout: systemMessage(text), stderr: logNote ? `${text}\n` : '', did };
  }
}

/** Does what the event's action says; returns the scan it made after a tool or at a turn's end. */
async function act(spec: AgentSpec, event: HookEvent, session: Session, did: string[], warnings: string[], scanSession: (s: Session, tool: string) => Promise<ScanResult>): Promise<ScanResult | undefined> {
  switch (event.action) {
    case 'session-start': {
      const base = await ensureBaseline(session);
      if (base) did.push(`baseline ${base.scanned} files`);
      return;
    }
    case 'turn': {
      // First what changed outside the agent since ckpt last looked (hand edits between prompts),
      // recorded as the user's, through the daemon's watched scan when one runs. The baseline first:
      // the Copilot CLI fires SessionStart and UserPromptSubmit at once, so the session start's
      // baseline may not be there yet, and a turn without one does not look — no `looked`, so
      // restores and captures of that turn took hand edits for the workspace of the prompt.
      const base = await ensureBaseline(session);
      if (base) did.push(`baseline ${base.scanned} files`);
      const r = await session.turn({ ...(event.prompt !== undefined ? { text: event.prompt } : {}), scan: (tool) => scanSession(session, tool) });
      if (r.outside) did.push(`outside ${r.outside.tag}`);
      if (r.warnings) warnings.push(...r.warnings);
      did.push(`turn ${r.turn}`);
      if (event.prompt && r.turn === 1 && (await session.metadata()).title === '') {
        await session.setTitle(event.prompt.replace(/\s+/g, ' ').trim().slice(0, TITLE_CHARS));
      }
      return;
    }
    case 'before-tool': {
      const tool = event.toolName!;
      const named = fileToolPaths(spec, tool, event.toolInput!);
      const fileTool = named !== undefined;
      const paths = named ?? pathsOf(event.toolInput!, spec.pathFields);
      if (paths.length > 0) {
        const r = await session.capture(paths, { tool, cwd: event.cwd, ...(event.callId ? { callId: event.callId } : {}) });
        if (r.tag) did.push(`capture ${r.tag}`);
      }
      // A shell (or unknown) tool is recorded by the scan after it: that needs a baseline before it runs.
      if (!fileTool) {
        const base = await ensureBaseline(session);
        if (base) did.push(`baseline ${base.scanned} files`);
      }
      return;
    }
    case 'after-tool': {
      const tool = event.toolName!;
      const paths = fileToolPaths(spec, tool, event.toolInput!);
      if (paths !== undefined) {
        if (paths.length > 0 && event.callId) {
          try {
            const r = await session.settle(paths, { callId: event.callId, cwd: event.cwd });
            if (r.tag) did.push(`settle ${r.tag}`);
            return;
          } catch (err) {
            // No capture of this call (the hook was installed mid-call, or its capture failed): a scan
            // still records what the tool changed, against the baseline.
            if (!isCkptError(err, 'TAG_NOT_FOUND')) throw err;
          }
        }
      }
      const r = await scanSession(session, tool);
      if (r.tag) did.push(`scan ${r.tag}${r.watched !== undefined ? ` (watched ${r.watched})` : ''}${'daemon' in r ? ' via daemon' : ''}`);
      if (r.warning) warnings.push(r.warning);
      return r;
    }
    case 'turn-end': {
      if (spec.events[event.name]?.endsCalls) for (const tag of await session.settleInFlight()) did.push(`settle ${tag}`);
      const r = await scanSession(session, event.name);
      if (r.tag) did.push(`scan ${r.tag}${r.watched !== undefined ? ` (watched ${r.watched})` : ''}${'daemon' in r ? ' via daemon' : ''}`);
      if (r.warning) warnings.push(r.warning);
      return r;
    }
    case 'compaction': {
      const triggers = spec.events[event.name]?.triggers;
      if (triggers && !triggers.includes(event.trigger ?? '')) return;
      const stored = await session.transaction(async (tx) => {
        const throughSeq = await tx.lastSeq();
        return tx.append([
          // Not the conversation's `compaction` (a summary replacing entries): the agent is about to
          // compact and does not tell the summary, so this only marks the moment.
          {
            type: 'agent_compaction',
            agent: spec.name,
            throughSeq,
            ...(event.trigger ? { trigger: event.trigger } : {}),
            ...(event.compactInstructions ? { instructions: event.compactInstructions } : {}),
          },
        ]);
      });
      did.push(`agent_compaction @${stored[0]!.seq}`);
      return;
    }
    case 'none':
      return;
  }
}

/**
 * `/clear` (SessionStart with source `clear`) gives the conversation a new agent session id, hence a
 * new ckpt session: link it to the one it continues — the workspace's latest other session of this
 * agent whose transcript lies in the same folder — so log and status can say where the earlier turns are.
 */
async function linkCleared(ws: Workspace, session: Session, spec: AgentSpec, event: HookEvent): Promise<string | undefined> {
  const folder = event.transcriptPath ? dirname(event.transcriptPath) : undefined;
  const candidates = await ws.list({ agent: spec.name });
  const previous = candidates.find((m) => m.id !== session.id && (folder === undefined || m.transcriptPath === undefined || dirname(m.transcriptPath) === folder));
  if (!previous) return undefined;
  await session.setInfo({ continues: previous.id });
  return previous.id;
}

/**
 * Strict mode blocks only a tool call whose before-image could not be recorded: a before-tool event
 * (also when it was rejected before it could be parsed whole: its event name is read from the raw JSON).
 */
function blocksInStrictMode(spec: AgentSpec, event: HookEvent | undefined, data: Buffer): boolean {
  if (event) return event.action === 'before-tool';
  try {
    const name = (JSON.parse(data.toString('utf8')) as Record<string, unknown>)[spec.fields.event];
    return typeof name === 'string' && actionOf(spec, name) === 'before-tool';
  } catch {
    return false;
  }
}

/** A tool that changes nothing (Read, Grep, …): its events are answered before the store is opened. */
function isPassive(spec: AgentSpec, event: HookEvent): boolean {
  return (event.action === 'before-tool' || event.action === 'after-tool') && spec.passiveTools.includes(event.toolName!);
}

/** The workspace root: --workspace, else the agent's project dir (e.g. CLAUDE_PROJECT_DIR), else the event's cwd. */
function projectRoot(spec: AgentSpec, env: NodeJS.ProcessEnv, event: HookEvent, flag: string | undefined): string {
  if (flag) return resolve(event.cwd, flag);
  for (const name of spec.projectDirEnv) {
    const dir = env[name];
    if (dir && isAbsolute(dir)) return dir;
  }
  return event.cwd;
}

function lockTimeout(env: NodeJS.ProcessEnv): number {
  const ms = Number(env.CKPT_HOOK_LOCK_TIMEOUT_MS);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : 10_000;
}

/** Claude Code (and Gemini CLI) show `systemMessage` to the user; exit 0 keeps the agent going. */
function systemMessage(text: string): string {
  return `${JSON.stringify({ systemMessage: text.length > 600 ? `${text.slice(0, 597)}...` : text })}\n`;
}

/** The same session with capture switched off for this hook only (the store's own setting is the daemon's). */
function withCaptureOff(session: Session): Session {
  if (!session.ctx.options.captureEnabled) return session;
  return new SessionClass({ ...session.ctx, options: { ...session.ctx.options, captureEnabled: false } }, session.id);
}
