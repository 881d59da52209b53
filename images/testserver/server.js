// mk8s test server: a small HTTP server for probes, services and lifecycle tests.
//   GET /healthz        200 "ok", or 500 while failing (FAIL_HEALTH=1, --fail-health, or after GET /fail?what=health)
//   GET /readyz         200 "ok", or 503 while failing (FAIL_READY=1, --fail-ready, or after GET /fail?what=ready)
//   GET /recover        stops failing both
//   GET /hostname       the pod's hostname
//   ANY /echo           JSON {method, url, headers, body, hostname}; ?msg=x answers just x
//   GET /exit?code=N    exits with code N (default 1)
//   GET /env            the environment as JSON
// Env/flags: PORT / --port (8080), EXIT_AFTER_MS / --exit-after-ms, EXIT_CODE / --exit-code (1),
// TERM_DELAY_MS / --term-delay-ms (delay before exiting on SIGTERM; 0 = exit at once).
'use strict';
const http = require('node:http');
const os = require('node:os');

const flags = {};
for (const a of process.argv.slice(2)) {
  const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
  if (m) flags[m[1]] = m[2] === undefined ? 'true' : m[2];
}
const opt = (flag, env, def) => flags[flag] ?? process.env[env] ?? def;
const port = Number(opt('port', 'PORT', '8080'));
const exitCode = Number(opt('exit-code', 'EXIT_CODE', '1'));
const exitAfterMs = Number(opt('exit-after-ms', 'EXIT_AFTER_MS', '0'));
const termDelayMs = Number(opt('term-delay-ms', 'TERM_DELAY_MS', '0'));
const state = {
  failHealth: ['1', 'true'].includes(opt('fail-health', 'FAIL_HEALTH', '')),
  failReady: ['1', 'true'].includes(opt('fail-ready', 'FAIL_READY', '')),
};

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    const send = (code, text, type = 'text/plain') => { res.writeHead(code, { 'content-type': type }); res.end(text); };
    console.log(`${new Date().toISOString()} ${req.method} ${req.url}`);
    switch (url.pathname) {
      case '/healthz': return state.failHealth ? send(500, 'unhealthy') : send(200, 'ok');
      case '/readyz': return state.failReady ? send(503, 'not ready') : send(200, 'ok');
      case '/fail': {
        const what = url.searchParams.get('what') ?? 'health';
        if (what === 'health' || what === 'both') state.failHealth = true;
        if (what === 'ready' || what === 'both') state.failReady = true;
        return send(200, `failing ${what}`);
      }
      case '/recover': state.failHealth = false; state.failReady = false; return send(200, 'recovered');
      case '/hostname': return send(200, os.hostname());
      case '/env': return send(200, JSON.stringify(process.env), 'application/json');
      case '/echo': {
        const msg = url.searchParams.get('msg');
        if (msg !== null) return send(200, msg);
        return send(200, JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body, hostname: os.hostname() }), 'application/json');
      }
      case '/exit': {
        const code = Number(url.searchParams.get('code') ?? exitCode);
        send(200, `exiting ${code}`);
        return setTimeout(() => process.exit(code), 10);
      }
      case '/': return send(200, `mk8s testserver on ${os.hostname()}\n`);
      default: return send(404, 'not found');
    }
  });
});

server.listen(port, () => console.log(`Listening on :${port}`));
if (exitAfterMs > 0) setTimeout(() => { console.log(`Exiting with ${exitCode} after ${exitAfterMs}ms`); process.exit(exitCode); }, exitAfterMs);
const stop = (sig) => {
  console.log(`Received ${sig}, exiting in ${termDelayMs}ms`);
  setTimeout(() => { server.close(); process.exit(0); }, termDelayMs);
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
