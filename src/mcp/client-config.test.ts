import { describe, expect, it } from 'vitest';
import { mcpClientConfig } from './client-config.js';

describe('mcpClientConfig', () => {
  it('starts this ckpt by absolute paths, with the workspace and store when given', () => {
    expect(mcpClientConfig({ node: '/usr/bin/node', script: '/opt/ckpt/bin/ckpt.js', workspace: '/p', store: '/s' })).toEqual({
      mcpServers: { ckpt: { command: '/usr/bin/node', args: ['/opt/ckpt/bin/ckpt.js', 'mcp', '--workspace', '/p', '--store', '/s'] } },
    });
  });

  it('carries the "person must confirm" setting', () => {
    expect(mcpClientConfig({ node: '/usr/bin/node', script: '/opt/ckpt/bin/ckpt.js', requirePerson: true }).mcpServers.ckpt.args).toEqual(['/opt/ckpt/bin/ckpt.js', 'mcp', '--require-person']);
  });

  it('falls back to npx when ckpt runs from the npx cache', () => {
    expect(mcpClientConfig({ node: '/usr/bin/node', script: '/home/u/.npm/_npx/abc/node_modules/ckpt/bin/ckpt.js' })).toEqual({
      mcpServers: { ckpt: { command: 'npx', args: ['-y', 'ckpt', 'mcp'] } },
    });
  });
});
