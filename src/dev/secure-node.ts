/**
 * A managed local node with security on and TLS on its HTTP layer, as a production cluster
 * runs: a throwaway CA and node certificate (openssl), and one file-realm superuser. The
 * integ-test distribution lacks analysis-common, so it cannot create its `.security` index:
 * API keys and native users cannot be minted, the file realm works.
 *
 * No transport TLS: the bootstrap check demanding it (with security on) is enforced only in
 * production mode; a single-node node bound to 127.0.0.1 runs in development mode, logs the
 * check as a warning and starts (verified on 9.5.4). Only `xpack.security.http.ssl` is set.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { nodeInstanceDir, startLocalNode, type LocalNode, type PreparedNodeConfig } from './local-elasticsearch.js';

export interface SecureNode extends LocalNode {
  /** PEM of the throwaway CA that signed the node certificate. */
  caFile: string;
  /** SHA-256 fingerprint of that CA, colon-separated (as Elasticsearch prints it). */
  caFingerprint: string;
  username: string;
  password: string;
}

export interface SecureNodeOptions {
  name: string;
  port: number;
  heap?: string;
  log?: (line: string) => void;
  username?: string;
  password?: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, and a node certificate for 127.0.0.1 and localhost signed by it, under `<confDir>/certs`. */
function writeCertificates(certsDir: string): void {
  fs.rmSync(certsDir, { recursive: true, force: true });
  fs.mkdirSync(certsDir, { recursive: true });
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=ecs-throwaway-ca',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    certsDir,
  );
  openssl(
    ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'node.key', '-out', 'node.csr'],
    certsDir,
  );
  fs.writeFileSync(
    path.join(certsDir, 'node.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'node.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      'node.ext',
      '-out',
      'leaf.crt',
    ],
    certsDir,
  );
  // The node presents its chain (leaf + CA), as Elasticsearch's auto-configured security does,
  // so a client pinning the CA fingerprint finds the CA in what the node sends.
  fs.writeFileSync(
    path.join(certsDir, 'node.crt'),
    fs.readFileSync(path.join(certsDir, 'leaf.crt'), 'utf8') + fs.readFileSync(path.join(certsDir, 'ca.crt'), 'utf8'),
  );
}

/** Starts (or reuses) the named node with security and HTTP TLS on and one file-realm superuser. */
export async function startSecureNode(opts: SecureNodeOptions): Promise<SecureNode> {
  const username = opts.username ?? 'ecs-service';
  const password = opts.password ?? 'ecs-service-password';
  const caFile = path.join(nodeInstanceDir(opts.name), 'config', 'certs', 'ca.crt');
  const prepareConfig = (node: PreparedNodeConfig): void => {
    const certsDir = path.join(node.confDir, 'certs');
    writeCertificates(certsDir);
    if (node.user) execFileSync('chown', ['-R', `${node.user.uid}:${node.user.gid}`, certsDir]);
    // Run as the node's own user, so the users files it writes stay readable by the node.
    execFileSync(
      path.join(node.home, 'bin', 'elasticsearch-users'),
      ['useradd', username, '-p', password, '-r', 'superuser'],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          ES_JAVA_HOME: node.javaHome,
          ES_PATH_CONF: node.confDir,
          HOME: node.confDir,
        },
        uid: node.user?.uid,
        gid: node.user?.gid,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
  };
  const node = await startLocalNode({
    name: opts.name,
    port: opts.port,
    heap: opts.heap,
    log: opts.log,
    settings: {
      'xpack.security.enabled': true,
      'xpack.security.http.ssl.enabled': true,
      'xpack.security.http.ssl.key': 'certs/node.key',
      'xpack.security.http.ssl.certificate': 'certs/node.crt',
      'xpack.security.http.ssl.certificate_authorities': 'certs/ca.crt',
    },
    prepareConfig,
    probe: { caFile, username, password },
  });
  const caFingerprint = new crypto.X509Certificate(fs.readFileSync(caFile)).fingerprint256;
  return { ...node, caFile, caFingerprint, username, password };
}
