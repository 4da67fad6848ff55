/*
 * test_queries.mjs — the dashboard's approximate-query charts in a real
 * browser (docs/relaqs.md).
 *
 * Starts a real slaqd under relaqs, attaches a query over its socket (a
 * job session that says "kind": "query" in hello) and reports ten
 * mini-batches whose estimates converge on 100 with bounds that narrow to
 * nothing, runs a real slaq-aqp query on a small TPC-H database beside
 * it, and checks in headless Chromium that each query has a chart whose
 * Chart.js data are the API's estimates and bounds, with the band closing
 * on the exact answer. Saves a screenshot under BUILD/test-artifacts/.
 *
 * Output is TAP; if Chromium cannot run it reports one SKIP line.
 * Usage: node tests/browser/test_queries.mjs   (SLAQ_BUILD = build dir)
 */
import {spawn, execFileSync} from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILD = path.resolve(ROOT, process.env.SLAQ_BUILD || 'build');
const SLAQD = path.join(BUILD, 'bin', 'slaqd');
const SLAQ = path.join(BUILD, 'bin', 'slaq');
const AQP = path.join(BUILD, 'bin', 'slaq-aqp');
const ARTIFACTS = path.join(BUILD, 'test-artifacts');
const CHROMIUM = process.env.SLAQ_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu',
  '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-proxy-server'];

let n = 0;
let failures = 0;
function ok(cond, name, detail) {
  n++;
  if (cond) {
    console.log(`ok ${n} - ${name}`);
  } else {
    failures++;
    console.log(`not ok ${n} - ${name}`);
    if (detail !== undefined) console.log('#   ' + String(detail).split('\n').join('\n#   '));
  }
  return cond;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(pred, what, timeoutMs = 20000) {
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

async function main() {
  console.log('TAP version 13');
  if (!fs.existsSync(CHROMIUM)) {
    console.log('1..1');
    console.log(`ok 1 - query charts in a real browser # SKIP ${CHROMIUM} is not installed`);
    return 0;
  }
  let chromium;
  try {
    ({chromium} = await import('playwright-core'));
  } catch (e) {
    console.log('1..1');
    console.log('ok 1 - query charts in a real browser # SKIP playwright-core is not installed');
    return 0;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slaq-browser-q-'));
  const state = path.join(dir, 'state');
  const sock = path.join(state, 'slaq.sock');
  const log = fs.openSync(path.join(dir, 'slaqd.log'), 'a');
  const proc = spawn(SLAQD, ['--state-dir', state, '--http', '127.0.0.1:0',
    '--epoch', '0.3', '--grace', '1', '--cores', '2', '--enforce', 'none',
    '--policy', 'relaqs'], {stdio: ['ignore', log, log]});
  const exited = new Promise((r) => proc.on('exit', (code) => r(code)));
  let ctx = null;
  let client = null;
  let base = null;
  const api = async (p) => (await fetch(base + p)).json();
  const slaq = (...args) => execFileSync(SLAQ, [args[0], '--socket', sock, ...args.slice(1)],
    {encoding: 'utf8', env: {...process.env, SLAQ_SOCKET: ''}}).trim();
  const errors = [];
  try {
    const portFile = path.join(state, 'http.port');
    await waitFor(() => fs.existsSync(sock) && fs.existsSync(portFile) &&
      fs.readFileSync(portFile, 'utf8').trim(), 'slaqd to start');
    base = 'http://127.0.0.1:' + fs.readFileSync(portFile, 'utf8').trim();
    await waitFor(async () => (await api('/api/status')).ok, 'slaqd to answer');

    // A query over the socket: ten mini-batches converging on 100.
    client = net.createConnection(sock);
    await new Promise((r) => client.once('connect', r));
    let welcome = '';
    client.on('data', (b) => { welcome += b.toString(); });
    client.write(JSON.stringify({type: 'hello', name: 'converging', kind: 'query'}) + '\n');
    const w = JSON.parse((await waitFor(() => welcome.includes('\n') && welcome, 'welcome')).split('\n')[0]);
    const qid = w.job;
    for (let i = 1; i <= 10; i++) {
      const half = 20 * (10 - i) / 9;
      const est = 100 + (i % 2 ? 1 : -1) * half / 2;
      client.write(JSON.stringify({type: 'report', iter: i, loss: half / 100, cpu_s: 0.01,
        samples: 10, estimates: [est], lower: [est - half], upper: [est + half]}) + '\n');
    }
    // A real slaq-aqp query beside it.
    const data = path.join(dir, 'sf.tpch');
    execFileSync(AQP, ['gen', '--scale-factor', '0.02', '--seed', '2', '--out', data],
      {stdio: 'ignore'});
    const aid = Number(slaq('submit', '--name', 'q6', '--', AQP, 'run', '--quiet',
      '--data', data, '--query', 'q6', '--batches', '20'));
    await waitFor(async () => (await api('/api/jobs/' + aid)).job?.state === 'done' ||
      (await api('/api/jobs/' + aid)).state === 'done', 'slaq-aqp to finish');

    const b = await chromium.launchPersistentContext(path.join(dir, 'chromium'), {
      executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS,
      viewport: {width: 1400, height: 1100}, timeout: 60000}).catch((e) => e);
    if (b instanceof Error) {
      console.log(`ok ${++n} - query charts in a real browser # SKIP chromium cannot run here: ${b.message.split('\n')[0]}`);
      return 0;
    }
    ctx = b;
    const page = await ctx.newPage();
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(base + '/');
    const charts = await waitFor(() => page.evaluate(() => {
      const out = {};
      for (const [id, q] of window.slaqDashboard.queries) {
        out[id] = {title: q.box.querySelector('h3').textContent,
          sets: q.chart.data.datasets.map((d) => ({id: d.slaqId,
            points: d.data.map((p) => [p.x, p.y])}))};
      }
      return Object.keys(out).length >= 2 &&
        Object.values(out).every((c) => c.sets.length === 3 && c.sets[2].points.length > 0)
        ? out : null;
    }), 'both query charts');
    ok(await page.isVisible('#queries'), 'the queries card shows when there are queries');
    ok(Object.keys(charts).map(Number).sort().join() === [qid, aid].sort().join(),
      'one chart per query', Object.keys(charts).join());

    const e = await api('/api/jobs/' + qid + '/estimates');
    const c = charts[qid];
    const get = (id) => c.sets.find((s) => s.id === id).points;
    ok(get('estimate').length === 10 &&
       get('estimate').every(([x, y], i) => x === i + 1 && Math.abs(y - e.points[i].est[0]) < 1e-9),
      'the chart draws the API\'s estimate after each mini-batch', JSON.stringify(get('estimate')));
    const width = get('upper').map(([, y], i) => y - get('lower')[i][1]);
    ok(width.length === 10 && width.every((v, i) => i === 0 || v < width[i - 1] + 1e-9) &&
       width[9] === 0 && width[0] > 39,
      'its band narrows to nothing at the last mini-batch', JSON.stringify(width));
    ok(c.title.includes('converging') && c.title.includes('mini-batch 10'),
      'the title names the query and its mini-batch', c.title);
    const a = charts[aid];
    const ae = a.sets.find((s) => s.id === 'estimate').points;
    const al = a.sets.find((s) => s.id === 'lower').points;
    const au = a.sets.find((s) => s.id === 'upper').points;
    ok(ae.length === 20 && Math.abs(al[al.length - 1][1] - ae[ae.length - 1][1]) < 1e-6 &&
       Math.abs(au[au.length - 1][1] - ae[ae.length - 1][1]) < 1e-6,
      'slaq-aqp\'s bounds close on its exact answer', JSON.stringify([ae.length, al.at(-1), au.at(-1)]));
    await page.locator('#queries').screenshot({path: path.join(ARTIFACTS, 'dashboard-queries.png')})
      .catch(() => {});
    ok(errors.length === 0, 'the page logged no errors', errors.join('\n'));
  } catch (err) {
    ok(false, 'the query dashboard test ran to the end', err.stack);
  } finally {
    if (ctx) await ctx.close().catch(() => {});
    if (client) client.destroy();
    await sleep(300);
    proc.kill('SIGTERM');
    const code = await exited;
    ok(code === 0, 'slaqd exits cleanly', 'exit ' + code);
    fs.rmSync(dir, {recursive: true, force: true});
  }
  console.log(`1..${n}`);
  return failures ? 1 : 0;
}

fs.mkdirSync(ARTIFACTS, {recursive: true});
process.exitCode = await main();
