// `ckpt init opencode`: opencode has no hook commands, only JavaScript plugins loaded from
// `.opencode/plugins/` (or `~/.config/opencode/plugins/`). ckpt's plugin is one file, generated here
// with the hook command baked in: it turns opencode's plugin events into JSON events in the shape of
// agents/opencode.ts and pipes each to `ckpt hook opencode --daemon` (the thin client), awaiting it
// before a tool runs. It never throws (a throwing `tool.execute.before` would block the tool) and
// gives up on a hook after 60 s. A subagent (the `task` tool) runs in a child opencode session: its
// events are sent as its root session's, and its prompt starts no turn — the subagent works inside the
// user's turn, as Claude Code's do (else the child became a ckpt session of its own, the newest, which
// `ckpt restore N` without --session then meant). The file is recognised by its first line; a file of
// that name that is not ckpt's is refused, left unchanged. Pure text here; install-agent.ts does the I/O.

export const PLUGIN_MARKER = '// ckpt: records this project\'s opencode sessions';

/**
 * `passive`: tools that change nothing (the opencode table's passiveTools): the plugin does not run the
 * hook for them at all — each would cost two hook processes (read, grep, glob…) for nothing.
 */
export function opencodePluginSource(command: string, passive: readonly string[] = []): string {
  return `${PLUGIN_MARKER} (written by \`ckpt init opencode\`; \`ckpt init opencode --uninstall\` removes it).
// Each event goes to ckpt's hook command as one JSON object on stdin; a failure never reaches opencode.
import { spawn } from 'node:child_process';

const COMMAND = ${JSON.stringify(command)};
// Tools that change nothing: no hook process for them.
const PASSIVE = new Set(${JSON.stringify(passive)});

export const CkptPlugin = async ({ directory, client }) => {
  const argsByCall = new Map();
  const started = new Set();
  // A subagent's session names its parent (parentID): each session's root, asked once, at most 5 s.
  const roots = new Map();
  const rootOf = (sessionID) => {
    if (!roots.has(sessionID)) {
      const ask = async () => {
        let id = sessionID;
        for (let depth = 0; depth < 16; depth++) {
          const r = await client.session.get({ path: { id } });
          const parent = r && r.data && r.data.parentID;
          if (typeof parent !== 'string' || parent === '' || parent === id) break;
          id = parent;
        }
        return id;
      };
      const late = new Promise((resolve) => setTimeout(() => resolve(sessionID), 5000).unref?.());
      roots.set(sessionID, Promise.race([client && client.session ? ask() : sessionID, late]).catch(() => sessionID));
    }
    return roots.get(sessionID);
  };
  const send = (event) =>
    new Promise((resolve) => {
      try {
        const child = spawn('/bin/sh', ['-c', COMMAND], {
          cwd: directory,
          env: { ...process.env, CKPT_OPENCODE_PROJECT_DIR: directory },
          stdio: ['pipe', 'ignore', 'ignore'],
        });
        const timer = setTimeout(() => {
          try { child.kill('SIGKILL'); } catch {}
          resolve();
        }, 60000);
        const done = () => { clearTimeout(timer); resolve(); };
        child.on('error', done);
        child.on('close', done);
        child.stdin.on('error', () => {});
        child.stdin.end(JSON.stringify({ ...event, cwd: directory }));
      } catch {
        resolve();
      }
    });
  // The after-tool event of a call whose before was sent, once (argsByCall holds the calls still open).
  const after = async (input) => {
    const args = argsByCall.get(input.callID) ?? (input && typeof input.args === 'object' && input.args !== null ? input.args : {});
    argsByCall.delete(input.callID);
    await send({ hook_event_name: 'tool.execute.after', session_id: await rootOf(input.sessionID), tool_name: input.tool, tool_input: args, tool_use_id: input.callID });
  };
  const start = async (sessionID) => {
    if (started.has(sessionID)) return;
    started.add(sessionID);
    await send({ hook_event_name: 'session.start', session_id: sessionID });
  };
  return {
    'chat.message': async (input, output) => {
      try {
        // A subagent's prompt is the model's, inside the user's turn: no turn of its own.
        if ((await rootOf(input.sessionID)) !== input.sessionID) return;
        const parts = Array.isArray(output?.parts) ? output.parts : [];
        const prompt = parts.filter((p) => p && p.type === 'text' && !p.synthetic && typeof p.text === 'string').map((p) => p.text).join('\\n');
        await start(input.sessionID);
        await send({ hook_event_name: 'chat.message', session_id: input.sessionID, prompt });
      } catch {}
    },
    'tool.execute.before': async (input, output) => {
      try {
        if (PASSIVE.has(input.tool)) return;
        const args = output && typeof output.args === 'object' && output.args !== null ? output.args : {};
        argsByCall.set(input.callID, args);
        const session = await rootOf(input.sessionID);
        await start(session);
        await send({ hook_event_name: 'tool.execute.before', session_id: session, tool_name: input.tool, tool_input: args, tool_use_id: input.callID });
      } catch {}
    },
    'tool.execute.after': async (input) => {
      try {
        if (PASSIVE.has(input.tool)) return;
        await after(input);
      } catch {}
    },
    // A tool that fails (an edit whose old text is not there, a write refused) gets no
    // tool.execute.after: its part turning to "error" is the only word of it. Without an after, its
    // capture stayed in flight for good and hid a later hand edit of the path from ckpt.
    event: async (input) => {
      try {
        const event = input && input.event;
        const part = event && event.type === 'message.part.updated' && event.properties ? event.properties.part : undefined;
        if (!part || part.type !== 'tool' || !part.state || part.state.status !== 'error' || !argsByCall.has(part.callID)) return;
        await after({ tool: part.tool, sessionID: part.sessionID, callID: part.callID });
      } catch {}
    },
    'experimental.session.compacting': async (input) => {
      try {
        // A subagent compacting its own conversation is not the user's session's.
        if ((await rootOf(input.sessionID)) !== input.sessionID) return;
        await send({ hook_event_name: 'session.compacting', session_id: input.sessionID, trigger: 'auto' });
      } catch {}
    },
  };
};
`;
}

export function isCkptPlugin(text: string): boolean {
  return text.startsWith(PLUGIN_MARKER);
}
