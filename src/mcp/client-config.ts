// The `mcpServers` entry an MCP client needs to start this very ckpt (`ckpt mcp --config` prints it):
// node and ckpt's entry script by absolute path, so it works from any folder and whatever is on the
// client's PATH; `npx -y ckpt mcp` when ckpt runs from npx's cache (which may be cleaned).
export interface McpClientConfigInput {
  /** Absolute path of node (process.execPath). */
  node: string;
  /** Real path of ckpt's entry script (bin/ckpt.js), if known. */
  script?: string;
  /** Workspace to serve; omitted, the client's working folder (the project, for most agents). */
  workspace?: string;
  store?: string;
  /** Adds `--require-person` (destructive tools need a person's approval through the client). */
  requirePerson?: boolean;
}

export interface McpServerEntry {
  command: string;
  args: string[];
}

export function mcpClientConfig(input: McpClientConfigInput): { mcpServers: { ckpt: McpServerEntry } } {
  const fromNpx = !input.script || /[\\/]_npx[\\/]/.test(input.script);
  const base: McpServerEntry = fromNpx ? { command: 'npx', args: ['-y', 'ckpt', 'mcp'] } : { command: input.node, args: [input.script!, 'mcp'] };
  if (input.workspace) base.args.push('--workspace', input.workspace);
  if (input.store) base.args.push('--store', input.store);
  if (input.requirePerson) base.args.push('--require-person');
  return { mcpServers: { ckpt: base } };
}
