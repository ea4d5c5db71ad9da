// Claude Code (https://code.claude.com/docs/en/hooks, "Hooks reference"): hook events and tools as
// ckpt records them. Every hook gets JSON on stdin with session_id, transcript_path, cwd,
// permission_mode and hook_event_name; PreToolUse adds tool_name, tool_input, tool_use_id;
// PostToolUse adds tool_response; UserPromptSubmit adds prompt; SessionStart adds source
// (startup | resume | clear | compact); PreCompact adds trigger (manual | auto) and
// custom_instructions. Claude Code sets CLAUDE_PROJECT_DIR to the project root for hook commands.
import { SNAKE_CASE_FIELDS, type AgentSpec } from '../agent-spec.js';

export const claude: AgentSpec = {
  name: 'claude',
  displayName: 'Claude Code',
  events: {
    SessionStart: 'session-start',
    UserPromptSubmit: 'turn',
    PreToolUse: 'before-tool',
    PostToolUse: 'after-tool',
    // A failed tool may still have written part of a file: settle or scan just the same.
    PostToolUseFailure: 'after-tool',
    PreCompact: 'compaction',
    Stop: 'none',
    SubagentStop: 'none',
    SessionEnd: 'none',
    Notification: 'none',
  },
  fileTools: {
    Write: ['file_path'],
    Edit: ['file_path'],
    MultiEdit: ['file_path'],
    NotebookEdit: ['notebook_path'],
  },
  pathFields: ['file_path', 'notebook_path'],
  passiveTools: ['Read', 'Glob', 'Grep', 'LS', 'WebFetch', 'WebSearch', 'TodoWrite', 'BashOutput', 'KillShell', 'KillBash', 'ExitPlanMode', 'ListMcpResourcesTool', 'ReadMcpResourceTool'],
  projectDirEnv: ['CLAUDE_PROJECT_DIR'],
  // Tool hooks match every tool ("*"): any tool not known to be passive is recorded; passive ones exit
  // before opening the store. Stop, SubagentStop and SessionEnd record nothing, so they are not installed.
  install: [
    { event: 'SessionStart' },
    { event: 'UserPromptSubmit' },
    { event: 'PreToolUse', matcher: '*' },
    { event: 'PostToolUse', matcher: '*' },
    { event: 'PreCompact' },
  ],
  // HTTP hooks (Claude Code 2.1.63+): the event JSON is POSTed to a url; header values may name
  // environment variables ($VAR) listed in allowedEnvVars.
  httpHooks: true,
  settingsFiles: { project: '.claude/settings.json', local: '.claude/settings.local.json', user: '.claude/settings.json' },
  fields: SNAKE_CASE_FIELDS,
};
