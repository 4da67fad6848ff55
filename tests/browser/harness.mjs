/*
 * harness.mjs — what the browser tests share: TAP output, waiting, a real
 * slaqd on a temporary state directory and a free port, and Debian's
 * headless Chromium driven by playwright-core.
 *
 * A test calls launchBrowser() first: when Chromium cannot run on this
 * machine it gets {skip: reason} and prints one "# SKIP" line (skip()).
 * Otherwise it starts a Slaqd, checks with tap.ok(), and in `finally`
 * closes the browser and stops slaqd (stop() also reports whether slaqd
 * exited cleanly) before printing the plan with tap.done().
 */
import {spawn, execFileSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BUILD = path.resolve(ROOT, process.env.SLAQ_BUILD || 'build');
export const BIN = path.join(BUILD, 'bin');
export const SLAQD = path.join(BIN, 'slaqd');
export const SLAQ = path.join(BIN, 'slaq');
export const ARTIFACTS = path.join(BUILD, 'test-artifacts');
// SLAQ_CHROMIUM names another binary (the skip path is tested with it).
export const CHROMIUM = process.env.SLAQ_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu',
  '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-proxy-server'];

/* TAP: "ok N - name" or "not ok N - name" with the detail as comments. */
export const tap = {
  n: 0,
  failures: 0,
  ok(cond, name, detail) {
    this.n++;
    if (cond) {
      console.log(`ok ${this.n} - ${name}`);
    } else {
      this.failures++;
      console.log(`not ok ${this.n} - ${name}`);
      if (detail !== undefined) console.log('#   ' + String(detail).split('\n').join('\n#   '));
    }
    return cond;
  },
  /* Prints the plan; returns the exit code. */
  done() {
    console.log(`1..${this.n}`);
    return this.failures ? 1 : 0;
  },
  /* The whole file is one skipped test; returns the exit code. */
  skip(name, reason) {
    console.log(`1..1\nok 1 - ${name} # SKIP ${reason}`);
    return 0;
  },
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Polls pred every 100 ms until it returns something true, which is
 * returned; throws after timeoutMs naming `what` and the last value. */
export async function waitFor(pred, what, timeoutMs = 20000) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await pred();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await sleep(100);
  }
}

/* A real slaqd with `args` after its state directory and HTTP port. */
export class Slaqd {
  constructor(args, prefix = 'slaq-browser-') {
    this.args = args;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    this.state = path.join(this.dir, 'state');
    this.sock = path.join(this.state, 'slaq.sock');
    this.logPath = path.join(this.dir, 'slaqd.log');
  }

  async start() {
    const log = fs.openSync(this.logPath, 'a');
    this.proc = spawn(SLAQD, ['--state-dir', this.state, '--http', '127.0.0.1:0',
      ...this.args], {stdio: ['ignore', log, log]});
    this.exited = new Promise((r) => this.proc.on('exit', (code) => r(code)));
    const portFile = path.join(this.state, 'http.port');
    await waitFor(() => fs.existsSync(this.sock) && fs.existsSync(portFile) &&
      fs.readFileSync(portFile, 'utf8').trim(), 'slaqd to start');
    this.base = 'http://127.0.0.1:' + fs.readFileSync(portFile, 'utf8').trim();
    await waitFor(async () => (await this.api('/api/status')).ok, 'slaqd to answer');
  }

  async api(p) {
    const r = await fetch(this.base + p);
    return r.json();
  }

  /* Runs `slaq CMD --socket SOCK ARGS...`; returns its trimmed stdout. */
  slaq(...args) {
    return execFileSync(SLAQ, [args[0], '--socket', this.sock, ...args.slice(1)],
      {encoding: 'utf8', env: {...process.env, SLAQ_SOCKET: ''}}).trim();
  }

  /* Stops slaqd and removes its directory; returns its exit code. With
   * cancelJobs, first cancels every active job and waits for them to end
   * (jobs outlive slaqd by design, so they must end first). */
  async stop({cancelJobs = false} = {}) {
    if (!this.proc) return 0;
    if (cancelJobs) await this.cancelAll();
    this.proc.kill('SIGTERM');
    const code = await this.exited;
    fs.rmSync(this.dir, {recursive: true, force: true});
    return code;
  }

  async cancelAll() {
    try {
      const jobs = (await this.api('/api/jobs')).jobs;
      for (const j of jobs) {
        if (j.state === 'running' || j.state === 'stopping') {
          try { this.slaq('cancel', String(j.id)); } catch { /* ended meanwhile */ }
        }
      }
      await waitFor(async () => (await this.api('/api/jobs')).jobs.every(
        (j) => j.state !== 'running' && j.state !== 'stopping'), 'jobs to end', 10000);
    } catch (e) {
      console.log('# cleanup: ' + e.message);
      for (const j of (await this.api('/api/jobs').catch(() => ({jobs: []}))).jobs) {
        if (j.pid > 0) try { process.kill(-j.pid, 'SIGKILL'); } catch { /* gone */ }
      }
    }
  }
}

/*
 * Starts headless Chromium with a fresh profile; returns {ctx, close} or
 * {skip: reason} when Chromium or playwright-core cannot run here. close()
 * closes the browser and removes the profile.
 */
export async function launchBrowser(viewport = {width: 1400, height: 1000}) {
  if (!fs.existsSync(CHROMIUM)) return {skip: `${CHROMIUM} is not installed`};
  let chromium;
  try {
    ({chromium} = await import('playwright-core'));
  } catch (e) {
    return {skip: 'playwright-core is not installed (run make deps): ' + e.message};
  }
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slaq-chromium-'));
  try {
    const ctx = await chromium.launchPersistentContext(userDir, {
      executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS,
      viewport, timeout: 60000});
    return {ctx, close: async () => {
      await ctx.close().catch(() => {});
      fs.rmSync(userDir, {recursive: true, force: true});
    }};
  } catch (e) {
    fs.rmSync(userDir, {recursive: true, force: true});
    return {skip: 'chromium cannot run here: ' + e.message.split('\n')[0]};
  }
}

/* Collects the page's errors (console errors and uncaught exceptions). */
export function pageErrors(page, errors = []) {
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  return errors;
}
