// Cursor (https://cursor.com/docs/agent/hooks, "Hooks"): `.cursor/hooks.json` in the project or
// `~/.cursor/hooks.json`, `{"version": 1, "hooks": {"<event>": [{"command": "…"}]}}`. Every hook gets
// JSON on stdin with conversation_id, generation_id, model, hook_event_name, cursor_version,
// workspace_roots, user_email and transcript_path; beforeSubmitPrompt adds prompt and attachments;
// preToolUse adds tool_name, tool_input, tool_use_id and cwd (every tool: Shell {command}, Write,
// Delete, Read, Grep, Task, MCP:<server>:<tool>); postToolUse adds tool_output and duration;
// postToolUseFailure (a tool that failed) error_message and failure_type; preCompact adds trigger
// (auto | manual); stop adds status and loop_count; sessionStart adds session_id. Cursor sets
// CURSOR_PROJECT_DIR (and CLAUDE_PROJECT_DIR) for hook commands. Exit 2 denies a before-hook's action;
// another failure lets it proceed. Every hook answers with JSON (`{}`: nothing to say).
// No Cursor binary runs here: tested with payloads shaped as its documentation shows them
// (test/hooks-cursor.test.ts), never against Cursor itself.
//
// What is installed, for every Cursor generation: Cursor 1.7–2.3 (and the `cursor-agent` CLI, which
// sends only the shell events) have no tool events — beforeShellExecution / afterShellExecution
// {command, cwd} and afterFileEdit {file_path, edits} (after the edit: no before-image) stand for the
// tools; later versions add preToolUse / postToolUse / postToolUseFailure for every tool, Shell
// included. Both are installed: on a newer Cursor a shell command runs two hooks before and two after
// (the second scan finds nothing new and records nothing) — the price of never missing a tool on an
// older one. The file a tool names (file_path, path, target_file) is captured before it runs and the
// workspace scanned after it — Cursor's tool inputs are not documented field by field, so no tool is
// trusted to change only the file it names — and `stop` scans what anything else changed.
import { recordsNothing, SNAKE_CASE_FIELDS, type AgentSpec } from '../agent-spec.js';

export const cursor: AgentSpec = {
  name: 'cursor',
  displayName: 'Cursor',
  // The one table of events: what ckpt does with each and how it is installed (agent-spec.ts).
  events: {
    sessionStart: { action: 'session-start' },
    beforeSubmitPrompt: { action: 'turn' },
    preToolUse: { action: 'before-tool' },
    postToolUse: { action: 'after-tool' },
    postToolUseFailure: { action: 'after-tool' },
    beforeShellExecution: { action: 'before-tool', tool: 'Shell' },
    afterShellExecution: { action: 'after-tool', tool: 'Shell' },
    afterFileEdit: { action: 'after-tool', tool: 'afterFileEdit' },
    preCompact: { action: 'compaction' },
    stop: { action: 'turn-end' },
    ...recordsNothing('beforeMCPExecution', 'afterMCPExecution', 'beforeReadFile', 'afterAgentResponse', 'afterAgentThought', 'beforeTabFileRead', 'afterTabFileEdit', 'subagentStart', 'subagentStop', 'sessionEnd'),
  },
  fileTools: {},
  pathFields: ['file_path', 'path', 'target_file'],
  passiveTools: ['Read', 'Grep', 'Glob', 'LS', 'SemanticSearch', 'WebSearch', 'WebFetch', 'TodoWrite', 'ReadLints'],
  projectDirEnv: ['CURSOR_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'],
  settingsFiles: { project: '.cursor/hooks.json', user: '.cursor/hooks.json' },
  install: 'flat-hooks-json',
  flatHook: { fields: (command) => ({ command }), version: { project: 1, user: 1 } },
  quietAnswer: '{}\n',
  fields: { ...SNAKE_CASE_FIELDS, sessionId: 'conversation_id', roots: 'workspace_roots' },
};
