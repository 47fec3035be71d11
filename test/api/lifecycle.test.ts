import { spawn } from 'node:child_process';
import net from 'node:net';
import { expect } from 'chai';
import { testElasticsearch } from '../helpers/elasticsearch.js';
import { RUN_PREFIX } from '../helpers/app.js';
import { until } from '../helpers/wait.js';

describe('process lifecycle', () => {
  it('SIGTERM: finishes in-flight requests, then exits 0', async function () {
    this.timeout(120_000);
    const es = await testElasticsearch();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, ELASTICSEARCH_URL: es.url, PORT: '0', HOST: '127.0.0.1', ECS_INDEX_PREFIX: `${RUN_PREFIX}-life`, LOG_LEVEL: 'info', ECS_DEVELOPMENT: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        output += d.toString();
        const m = /"url":"(http:\/\/[^"]+)"/.exec(buf);
        if (m) resolve(m[1]);
      });
      void exited.then((code) => reject(new Error(`exited early with ${code}: ${buf}`)));
    });
    // On a loaded machine index set-up can outlast the server's 15 s head start (it then answers
    // 503 until ready): the request below must meet a ready service.
    await until('the service ready', async () => (await fetch(`${url}/health/ready`)).status === 200, 120_000, 200);
    // A request whose body is still arriving when SIGTERM lands is in flight: it must be answered.
    // `Expect: 100-continue` makes the server say when it holds the request, so the signal
    // lands while the request is in flight however slow the machine is.
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    let answer = '';
    const heard = (text: string): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!answer.includes(text)) return;
          socket.off('data', check);
          resolve();
        };
        socket.on('data', check);
        socket.once('error', reject);
        socket.once('close', () => reject(new Error(`closed before ${text}: ${answer}`)));
      });
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    const continued = heard('100 Continue');
    const body = '{"linux": "3.11.0", "mac": "3.11.0", "windows": "3.11.0"}';
    socket.write(
      'PUT /endpoint-control-service/v1/client-version/default HTTP/1.1\r\n' +
        `Host: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
        'Expect: 100-continue\r\nConnection: close\r\n\r\n',
    );
    await continued;
    socket.write(body.slice(0, 20));
    // The server logs this just before it stops accepting: from then on the request must still be answered.
    const shuttingDown = new Promise<void>((resolve) => {
      const check = (): void => {
        if (output.includes('shutting down')) resolve();
      };
      child.stdout.on('data', check);
      check();
    });
    child.kill('SIGTERM');
    await shuttingDown;
    const answered = heard('HTTP/1.1 200 ');
    socket.write(body.slice(20));
    await answered;
    socket.destroy();
    const code = await exited;
    expect(code, output).to.equal(0);
    // No longer accepting.
    const after = await fetch(`${url}/health/live`).then(
      () => 'answered',
      () => 'refused',
    );
    expect(after).to.equal('refused');
  });
});
