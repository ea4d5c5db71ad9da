// The real Claude Code CLI with ckpt's command hooks recording in-process (`ckpt init claude --command`,
// CKPT_NO_DAEMON=1 for the hooks): the scenarios of
// claude-scenarios.ts in a git project and a plain folder.
import { defineClaudeScenarios } from './claude-scenarios.js';

defineClaudeScenarios('command');
