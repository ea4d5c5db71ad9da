// OpenAI Codex CLI (https://developers.openai.com/codex/hooks, "Hooks"): hooks.json in Claude Code's
// shape, at ~/.codex/hooks.json or <repo>/.codex/hooks.json. Every hook gets JSON on stdin with
// session_id, transcript_path, cwd, hook_event_name and model; turn-scoped events add turn_id;
// UserPromptSubmit adds prompt; SessionStart adds source (startup | resume | clear); PreToolUse and
// PostToolUse add tool_name, tool_input and tool_use_id. Shell calls arrive as tool_name "Bash" with
// {command}; edits as "apply_patch" with {command: <patch>}, the files named only in the patch's
// headers (hooks/patch-paths.ts). A failed shell command still fires PostToolUse; a patch Codex cannot
// apply (its context not in the file) fires PreToolUse and no PostToolUse (its capture is settled at
// Stop); a patch applied through the shell fires neither (the Stop scan records the turn). Codex sets
// no project-dir variable: hooks run in the session's cwd, from which ckpt locates the workspace.
// Codex runs a hook only once the user trusted it (`/hooks` in codex) — an untrusted hook is skipped
// without a word. Verified against the real binary (@openai/codex 0.169.0): test/agents/codex.test.ts,
// test/agents/codex-failed-tool.test.ts.
import { CLAUDE_SHAPED_START, recordsNothing, SNAKE_CASE_FIELDS, type AgentSpec } from '../agent-spec.js';

export const codex: AgentSpec = {
  name: 'codex',
  displayName: 'Codex CLI',
  // The one table of events: what ckpt does with each and how it is installed (agent-spec.ts).
  events: {
    ...CLAUDE_SHAPED_START,
    PreToolUse: { action: 'before-tool', matcher: '*' },
    PostToolUse: { action: 'after-tool', matcher: '*' },
    PreCompact: { action: 'compaction' },
    // A scan at the end of each answer: Codex fires no PostToolUse for a patch the model applies
    // through the shell (`apply_patch <<EOF` in exec_command: PreToolUse "Bash" only), so without it
    // that edit read as the user's at the next prompt, and after the last one restore N refused DRIFT.
    // It comes once every tool call of the turn has ended, and a patch Codex could not apply (its
    // context not in the file) gets no PostToolUse: its capture is settled here, else it stayed in
    // flight for good and hid later hand edits of its paths (test/agents/codex-failed-tool.test.ts).
    Stop: { action: 'turn-end', endsCalls: true },
    ...recordsNothing('PostCompact', 'PermissionRequest', 'SessionEnd'),
  },
  fileTools: {},
  patchTools: { apply_patch: 'command' },
  pathFields: [],
  passiveTools: ['view_image', 'update_plan', 'get_goal', 'create_goal', 'update_goal', 'request_user_input', 'tool_search', 'web_search', 'list_mcp_resources', 'read_mcp_resource'],
  projectDirEnv: [],
  settingsFiles: { project: '.codex/hooks.json', user: '.codex/hooks.json' },
  installNote:
    'Codex runs new or changed hooks only once you trust them: start codex and review them with /hooks (project hooks also need the project trusted). Until then they are skipped without a word.',
  fields: SNAKE_CASE_FIELDS,
};
