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
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {ARTIFACTS, BIN, Slaqd, launchBrowser, pageErrors, sleep, tap, waitFor}
  from './harness.mjs';

const AQP = path.join(BIN, 'slaq-aqp');
const ok = tap.ok.bind(tap);

async function main() {
  console.log('TAP version 13');
  const b = await launchBrowser({width: 1400, height: 1100});
  if (b.skip) return tap.skip('query charts in a real browser', b.skip);
  fs.mkdirSync(ARTIFACTS, {recursive: true});
  const d = new Slaqd(['--epoch', '0.3', '--grace', '1', '--cores', '2',
    '--enforce', 'none', '--policy', 'relaqs'], 'slaq-browser-q-');
  let client = null;
  const api = (p) => d.api(p);
  const errors = [];
  try {
    await d.start();

    // A query over the socket: ten mini-batches converging on 100.
    client = net.createConnection(d.sock);
    await new Promise((r) => client.once('connect', r));
    let welcome = '';
    client.on('data', (chunk) => { welcome += chunk.toString(); });
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
    const data = path.join(d.dir, 'sf.tpch');
    execFileSync(AQP, ['gen', '--scale-factor', '0.02', '--seed', '2', '--out', data],
      {stdio: 'ignore'});
    const aid = Number(d.slaq('submit', '--name', 'q6', '--', AQP, 'run', '--quiet',
      '--data', data, '--query', 'q6', '--batches', '20'));
    await waitFor(async () => (await api('/api/jobs/' + aid)).job?.state === 'done' ||
      (await api('/api/jobs/' + aid)).state === 'done', 'slaq-aqp to finish');

    const page = await b.ctx.newPage();
    pageErrors(page, errors);
    await page.goto(d.base + '/');
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
    await b.close();
    if (client) client.destroy();
    await sleep(300);
    const code = await d.stop();
    ok(code === 0, 'slaqd exits cleanly', 'exit ' + code);
  }
  return tap.done();
}

process.exitCode = await main();
