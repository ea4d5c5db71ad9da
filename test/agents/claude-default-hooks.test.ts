// The real Claude Code CLI with ckpt's default install (`ckpt init claude`: it starts the daemon;
// per-tool-call HTTP hooks, per-prompt command hooks forwarding to the daemon): the scenarios of
// claude-scenarios.ts in a git project and a plain folder.
import { defineClaudeScenarios } from './claude-scenarios.js';

defineClaudeScenarios('default');
