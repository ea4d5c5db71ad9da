// A TCP proxy the shared-store fault tests put in front of a server (S3) so that they can take it
// away and bring it back (issue 33): `refuse` closes the listening socket and every connection (the
// client sees ECONNREFUSED / resets), `blackhole` keeps accepting but forwards nothing and answers
// nothing (a partition: the client only notices by its own timeouts), `up` forwards again.
import net from 'node:net';

export type ProxyMode = 'up' | 'refuse' | 'blackhole';

export interface TcpProxy {
  port: number;
  /** Switches mode; connections open at the switch are cut (up: new ones go through). */
  set(mode: ProxyMode): Promise<void>;
  /** Connections accepted since the start. */
  readonly accepted: number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'up';
  let accepted = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    accepted++;
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => {});
    if (mode === 'blackhole') return; // held open, read into the void
    const upstream = net.connect(target);
    open.add(upstream);
    upstream.on('close', () => {
      open.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listen = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const cutAll = (): void => {
    for (const s of open) s.destroy();
    open.clear();
  };
  return {
    port,
    get accepted() {
      return accepted;
    },
    async set(next) {
      if (next === mode) return;
      cutAll();
      if (mode === 'refuse') await listen(port);
      if (next === 'refuse') await new Promise<void>((r) => server.close(() => r()));
      mode = next;
    },
    async close() {
      cutAll();
      if (mode !== 'refuse') await new Promise<void>((r) => server.close(() => r()));
      mode = 'refuse';
    },
  };
}
