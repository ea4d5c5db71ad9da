// Every agent's one table (agent-spec.ts): each event `ckpt hook <agent>` handles is installed by
// `ckpt init <agent>` — into a real settings file, for every agent ckpt knows — with a matcher that
// lets every tool but the passive ones through (issue 28), and nothing else is installed. Issue 26 item 2: Claude Code's
// PostToolUseFailure was handled but never installed, so a failing command's writes went unrecorded.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installEntries } from './agent-spec.js';
import { AGENTS } from './agents/index.js';
import { parseHookEvent } from './hook-input.js';
import { installAgent } from './install/install-agent.js';
import { isCkptHookCommand } from './install/merge-hooks.js';
import { JSON_ANSWER_AGENTS, START_EVENTS } from './client/hook-client.js';
import { HTTP_HOOK_SETTINGS } from './client/squatted-port.js';

type Settings = { hooks: Record<string, { matcher?: string; hooks: { type: string; command?: string; url?: string }[] }[]> };

const raw = (fields: Record<string, unknown>) => {
  const data = Buffer.from(JSON.stringify(fields));
  return { data, tooLarge: false, bytes: data.length };
};

// opencode is installed as a plugin file, not hook entries: its own test checks the plugin sends every handled event.
describe.each(Object.values(AGENTS).filter((a) => a.install !== 'opencode-plugin'))('the $name table', (spec) => {
  it('every event the hook handles is installed, and only those', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-tables-'));
    try {
      for (const http of [false, true]) {
        if (http && !spec.httpHooks) continue;
        const r = await installAgent({
          spec,
          scope: 'project',
          projectDir: join(dir, String(http)),
          homeDir: dir,
          ckptCommand: '/usr/bin/node /opt/ckpt/bin/ckpt.js',
          ...(http ? { http: { url: `http://127.0.0.1:9/hooks/${spec.name}`, headers: {}, allowedEnvVars: [] } } : {}),
        });
        const settings = JSON.parse(await readFile(r.file, 'utf8')) as Settings;
        // Cursor and Copilot list hook entries straight under each event: seen here as one group without a matcher.
        const flat = spec.install === 'flat-hooks-json';
        if (flat) for (const [event, list] of Object.entries(settings.hooks)) settings.hooks[event] = [{ hooks: list as unknown as { type: string; command?: string }[] }];
        const f = spec.fields;
        const handled = Object.keys(spec.events).filter((name) => {
          const event = parseHookEvent(spec, raw({ [f.event]: name, [f.sessionId]: 's', [f.cwd]: dir, [f.toolName]: 'SomeNewTool', [f.toolInput]: {} }));
          return event.action !== 'none';
        });
        expect(handled.length).toBeGreaterThan(3);
        expect(Object.keys(settings.hooks).sort(), `installed (${http ? 'http' : 'command'})`).toEqual([...handled].sort());
        for (const name of handled) {
          const groups = settings.hooks[name]!;
          expect(groups).toHaveLength(1);
          const tool = spec.events[name]!.action === 'before-tool' || spec.events[name]!.action === 'after-tool';
          // Tool events must reach ckpt for every tool but the passive ones (an unknown tool is scanned after it ran).
          const matcher = groups[0]!.matcher;
          // A lifecycle event has no matcher, but one that records a single trigger may match only it (Gemini's PreCompress).
          const triggers = spec.events[name]!.triggers;
          if (!tool) expect(matcher, name).toBe(triggers?.length === 1 ? triggers[0] : undefined);
          else if (flat) {
            // Flat hook files: no matcher (every tool reaches ckpt, which answers a passive one before
            // opening the store), or one the agent matches against the whole tool name (Copilot CLI).
            if (matcher !== undefined) {
              const whole = new RegExp(`^(?:${matcher})$`);
              expect(whole.test('SomeNewTool'), name).toBe(true);
              for (const t of spec.passiveTools) expect(whole.test(t), `${name} ${t}`).toBe(false);
              // Read as a search instead, it must still let every tool through.
              for (const t of ['SomeNewTool', ...spec.passiveTools]) expect(new RegExp(matcher).test(t), `${name} ${t} (search)`).toBe(true);
            }
          } else if (matcher !== '*') {
            expect(new RegExp(matcher!).test('SomeNewTool'), name).toBe(true);
            for (const t of spec.passiveTools) expect(new RegExp(matcher!).test(t), `${name} ${t}`).toBe(false);
          }
          const [hook] = groups[0]!.hooks;
          if (http && !spec.events[name]!.commandOnly) expect(hook).toMatchObject({ type: 'http' });
          else expect(isCkptHookCommand(hook!.command, spec.name), name).toBe(true);
          if (flat) expect(groups[0]!.hooks, name).toHaveLength(1);
        }
      }
      // The thin client answers `{}` for exactly the agents that need a JSON answer from every hook.
      expect(JSON_ANSWER_AGENTS.has(spec.name), 'JSON_ANSWER_AGENTS').toBe(spec.quietAnswer !== undefined);
      // …and probes the port of exactly the agents with HTTP hooks, where their settings name it.
      const settings = HTTP_HOOK_SETTINGS[spec.name];
      expect(settings !== undefined, 'HTTP_HOOK_SETTINGS').toBe(spec.httpHooks === true);
      if (settings) expect([spec.projectDirEnv.includes(settings.env), settings.file]).toEqual([true, spec.settingsFiles.local]);
      expect(installEntries(spec).map((e) => e.event)).toEqual(Object.keys(spec.events).filter((n) => spec.events[n]!.action !== 'none'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('every agent', () => {
  // `--daemon` hooks start the store's daemon at a once-per-prompt event (session start, prompt, stop,
  // compaction). An agent whose names are missing from the thin client's START_EVENTS never gets one: every
  // tool call then pays an in-process hook (a node start per event) — opencode's plugin events did.
  it.each(Object.values(AGENTS))('$name: its once-per-prompt events start the daemon', (spec) => {
    const once = Object.entries(spec.events).filter(([, e]) => ['session-start', 'turn', 'turn-end', 'compaction'].includes(e.action)).map(([name]) => name);
    expect(once.length, spec.name).toBeGreaterThan(0);
    expect(once.filter((name) => !START_EVENTS.has(name)), spec.name).toEqual([]);
  });
});

describe('Gemini CLI', () => {
  // Gemini CLI 0.61's own matching (hookPlanner matchesContext): a tool event's matcher is a regular
  // expression searched in the tool name (`*` or '' = every tool); a trigger event's is compared with the
  // trigger as a string. No hook process should start for a passive tool or an `auto` PreCompress
  // (fired before every model call).
  const geminiRuns = (matcher: string | undefined, context: { toolName?: string; trigger?: string }) => {
    if (!matcher || matcher.trim() === '' || matcher.trim() === '*') return true;
    if (context.toolName) return new RegExp(matcher.trim()).test(context.toolName);
    if (context.trigger) return matcher.trim() === context.trigger;
    return true;
  };
  it('runs no hook for a passive tool or an auto PreCompress, and every other tool and a manual one', () => {
    const gemini = AGENTS.gemini!;
    const entries = new Map(installEntries(gemini).map((e) => [e.event, e]));
    for (const event of ['BeforeTool', 'AfterTool']) {
      for (const t of gemini.passiveTools) expect(geminiRuns(entries.get(event)!.matcher, { toolName: t }), `${event} ${t}`).toBe(false);
      for (const t of ['write_file', 'replace', 'run_shell_command', 'mcp_server_tool', 'read_file_and_write']) expect(geminiRuns(entries.get(event)!.matcher, { toolName: t }), `${event} ${t}`).toBe(true);
    }
    expect(geminiRuns(entries.get('PreCompress')!.matcher, { trigger: 'auto' })).toBe(false);
    expect(geminiRuns(entries.get('PreCompress')!.matcher, { trigger: 'manual' })).toBe(true);
  });
});

describe('Claude Code', () => {
  it('PostToolUseFailure is installed and handled like PostToolUse; SessionStart stays a command hook with --http', () => {
    const { claude } = AGENTS;
    const entries = installEntries(claude!);
    expect(entries.find((e) => e.event === 'PostToolUseFailure')).toEqual({ event: 'PostToolUseFailure', matcher: claude!.events.PostToolUse!.matcher, perToolCall: true });
    expect(entries.find((e) => e.event === 'SessionStart')).toEqual({ event: 'SessionStart', commandOnly: true });
  });
});
