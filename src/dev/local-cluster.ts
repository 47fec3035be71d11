/**
 * A managed multi-node Elasticsearch cluster on loopback, for the cluster test and for trying
 * the service against node loss. Each node is a managed local node (local-elasticsearch.ts,
 * instance `<name>-<i>` under `.local/`, run as the unprivileged user like the single node)
 * with fixed free transport ports, the same seed hosts and initial master nodes, so the nodes
 * form one cluster. A node can be killed (SIGKILL of its process group) and started again
 * later on the same ports and data directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ensureDistribution,
  freePort,
  pinnedVersion,
  startLocalNode,
  stopLocalNode,
  type LocalNode,
} from './local-elasticsearch.js';

export interface LocalClusterOptions {
  /** Cluster name; node i is the local instance `<name>-<i>` and the Elasticsearch node `<name>-<i>`. */
  name: string;
  nodes: number;
  heap?: string;
  log?: (line: string) => void;
}

export interface ClusterNode {
  /** Elasticsearch node name. */
  name: string;
  /** Local instance name (`.local/es-<instance>`). */
  instance: string;
  url: string;
  httpPort: number;
  transportPort: number;
  /** The running node; undefined while it is killed or stopped. */
  running: LocalNode | undefined;
}

export interface LocalCluster {
  nodes: ClusterNode[];
  /** HTTP URLs of the nodes that run. */
  urls(): string[];
  /** SIGKILL of the node's process group (launcher and server JVM); resolves once its HTTP port is closed. */
  kill(node: ClusterNode): Promise<void>;
  /** Starts a killed or stopped node again on its ports and data directory; resolves once it has joined. */
  restart(node: ClusterNode): Promise<void>;
  /** Stops every node this cluster started (SIGTERM, then SIGKILL). */
  stop(): Promise<void>;
  /** Stops every node and deletes the instances' folders (data, logs, config). */
  destroy(): Promise<void>;
}

const localDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '.local');

async function portClosed(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(500) });
    return false;
  } catch {
    return true;
  }
}

/**
 * Starts the cluster's nodes together (none answers before a majority of the initial master
 * nodes has met). Nodes left by an interrupted run are stopped and their data wiped first, so
 * every call forms a new cluster.
 */
export async function startLocalCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  const log = opts.log ?? (() => {});
  // Once, before the nodes start side by side (each would unpack it otherwise).
  ensureDistribution(pinnedVersion(), log);
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < opts.nodes; i++) {
    const instance = `${opts.name}-${i}`;
    await stopLocalNode(instance);
    fs.rmSync(path.join(localDir, `es-${instance}`), { recursive: true, force: true });
    nodes.push({
      name: instance,
      instance,
      url: '',
      httpPort: await freePort(),
      transportPort: await freePort(),
      running: undefined,
    });
  }
  const seeds = nodes.map((n) => `127.0.0.1:${n.transportPort}`).join(', ');
  const masters = nodes.map((n) => n.name).join(', ');

  // The initial master nodes bootstrap the cluster once; a node that restarts joins the cluster its
  // data directory names (with the setting still there Elasticsearch warns of possible data loss).
  const startNode = async (n: ClusterNode, bootstrap: boolean): Promise<void> => {
    n.running = await startLocalNode({
      name: n.instance,
      port: n.httpPort,
      heap: opts.heap ?? '384m',
      log: (l) => log(`[${n.name}] ${l}`),
      settings: {
        'cluster.name': opts.name,
        'node.name': n.name,
        'discovery.type': 'multi-node',
        'transport.port': n.transportPort,
        'discovery.seed_hosts': `[${seeds}]`,
        ...(bootstrap ? { 'cluster.initial_master_nodes': `[${masters}]` } : {}),
      },
    });
    n.url = n.running.url;
  };

  const cluster: LocalCluster = {
    nodes,
    urls: () => nodes.filter((n) => n.running).map((n) => n.url),
    kill: async (n) => {
      const pid = n.running?.pid;
      if (!pid) return;
      n.running = undefined;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      const deadline = Date.now() + 30_000;
      while (!(await portClosed(n.url))) {
        if (Date.now() > deadline) throw new Error(`${n.name} still answers 30 s after SIGKILL`);
        await new Promise((r) => setTimeout(r, 100));
      }
      log(`[${n.name}] killed (SIGKILL)`);
    },
    restart: async (n) => {
      if (n.running) return;
      await startNode(n, false);
    },
    stop: async () => {
      await Promise.all(
        nodes.map(async (n) => {
          n.running = undefined;
          await stopLocalNode(n.instance);
        }),
      );
    },
    destroy: async () => {
      await cluster.stop();
      for (const n of nodes) fs.rmSync(path.join(localDir, `es-${n.instance}`), { recursive: true, force: true });
    },
  };

  try {
    await Promise.all(nodes.map((n) => startNode(n, true)));
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
