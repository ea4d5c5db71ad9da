// opencode (https://opencode.ai/docs/plugins, "Plugins"): no hook commands — a JavaScript plugin in
// `.opencode/plugins/` (project) or `~/.config/opencode/plugins/` (user) gets `chat.message` (the
// user's message, its text parts), `tool.execute.before` ({tool, sessionID, callID} and {args}) and
// `tool.execute.after` (none for a tool call that fails: the plugin sends it when the call's part turns
// to "error", from opencode's `event` hook), and `experimental.session.compacting`. The plugin `ckpt init opencode` writes
// (install/opencode-plugin.ts) turns each into one JSON event in this table's shape and runs the
// installed `ckpt hook opencode` command with it (the thin client, so a running daemon records it),
// awaiting it before the tool runs. Tools: edit {filePath, oldString, newString}, write {filePath,
// content}, apply_patch {patchText} (GPT models), bash {command}. Verified against the real binary
// (opencode-ai 1.18.33): test/agents/opencode.test.ts; a subagent (task) is sent as its root session
// by the plugin: test/agents/opencode-subagent.test.ts; a failed call: test/agents/opencode-failed-tool.test.ts.
import { SNAKE_CASE_FIELDS, type AgentSpec } from '../agent-spec.js';

export const opencode: AgentSpec = {
  name: 'opencode',
  displayName: 'opencode',
  // The event names are the plugin's: it sends them as `hook_event_name`.
  events: {
    'session.start': { action: 'session-start' },
    'chat.message': { action: 'turn' },
    'tool.execute.before': { action: 'before-tool', matcher: '*' },
    'tool.execute.after': { action: 'after-tool', matcher: '*' },
    'session.compacting': { action: 'compaction' },
  },
  fileTools: { edit: ['filePath'], write: ['filePath'], multiedit: ['filePath'] },
  patchTools: { apply_patch: 'patchText' },
  pathFields: ['filePath'],
  passiveTools: ['read', 'glob', 'grep', 'list', 'webfetch', 'websearch', 'codesearch', 'todowrite', 'todoread', 'task', 'skill', 'question'],
  projectDirEnv: ['CKPT_OPENCODE_PROJECT_DIR'],
  projectDirIsStart: true,
  settingsFiles: { project: '.opencode/plugins/ckpt.js', user: '.config/opencode/plugins/ckpt.js' },
  install: 'opencode-plugin',
  installNote: 'opencode loads the plugin when it starts; on its first run it also installs @opencode-ai/plugin into .opencode/ (ckpt ignores node_modules, and records the rest like any change)',
  // The plugin hands the engine Claude-shaped events.
  fields: SNAKE_CASE_FIELDS,
};
