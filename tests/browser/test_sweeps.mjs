/*
 * test_sweeps.mjs — the dashboard's sweeps card in a real browser.
 *
 * Starts a real slaqd (temporary state directory, a free port), runs a
 * small real sweep (slaq-train logreg, three configurations, one slot,
 * policy default, to its end), opens the page in Debian's headless
 * Chromium (playwright-core) and checks what the card shows against
 * /api/sweeps/ID: the sweep's row and state, one row per configuration
 * with its state, and one chart line per configuration that reported,
 * drawn from its curve, with the target line. Saves a screenshot under
 * BUILD/test-artifacts/. TAP output; skips (one "# SKIP" line) only when
 * Chromium cannot run.
 */
import fs from 'node:fs';
import path from 'node:path';
import {ARTIFACTS, BIN, Slaqd, launchBrowser, pageErrors, tap, waitFor}
  from './harness.mjs';

const check = tap.ok.bind(tap);

async function main() {
  console.log('TAP version 13');
  const b = await launchBrowser({width: 1400, height: 1400});
  if (b.skip) return tap.skip('sweeps card', b.skip);
  const d = new Slaqd(['--epoch', '0.3', '--enforce', 'none'], 'slaq-sweeps-');
  const dir = d.dir;
  try {
    await d.start();
    const page = await b.ctx.newPage();
    const errors = pageErrors(page);
    await page.goto(d.base + '/');
    await page.waitForFunction(() => window.slaqSweeps && window.slaqSweeps.updates > 0);
    check(await page.evaluate(() => document.getElementById('sweeps').hidden),
      'without sweeps the card is hidden');

    const spec = {
      name: 'browser', command: path.join(BIN, 'slaq-train') +
        ' logreg --subsample 0.05 --validation 0.2 --lr {lr} --iters {epochs} --quiet',
      space: {lr: {type: 'log-uniform', low: 0.001, high: 1}},
      generator: {type: 'random', seed: 2}, configs: 3, metric: 'val_accuracy',
      y_target: 0.99, epochs: 6, slots: 1, policy: 'default',
      stop_at_target: false};
    fs.writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(spec));
    const id = Number(d.slaq('sweep', path.join(dir, 'spec.json')));
    check(id === 1, 'slaq sweep starts sweep 1', id);
    const api = async () => (await (await fetch(d.base + '/api/sweeps/' + id)).json()).sweep;
    const done = await waitFor(async () => { const w = await api(); return w.state === 'done' ? w : null; },
      'the sweep to end', 120000);
    await page.waitForFunction((n) => window.slaqSweeps.last &&
      window.slaqSweeps.last.state === 'done' &&
      window.slaqSweeps.chart && window.slaqSweeps.chart.data.datasets.length === n + 1,
    done.config_list.length, {timeout: 20000}).catch(() => {});
    const seen = await page.evaluate(() => ({
      visible: !document.getElementById('sweeps').hidden,
      rows: [...document.querySelectorAll('#sweep-table tbody tr')].map((tr) =>
        [...tr.children].map((td) => td.textContent)),
      cfgRows: [...document.querySelectorAll('#sweep-configs tbody tr')].map((tr) =>
        [...tr.children].map((td) => td.textContent)),
      lines: window.slaqSweeps.chart ? window.slaqSweeps.chart.data.datasets.map((d) => ({
        label: d.label, cfg: d.config, ys: d.data.map((p) => p.y)})) : [],
      title: document.getElementById('sweep-title').textContent,
    }));
    check(seen.visible, 'the sweeps card shows once there is a sweep');
    check(seen.rows.length === 1 && seen.rows[0][1] === 'browser' && seen.rows[0][2] === 'done',
      'the sweep table has the sweep, done', JSON.stringify(seen.rows));
    check(seen.title.includes('Sweep 1: browser'), 'the selected sweep is the one started', seen.title);
    check(seen.cfgRows.length === 3 && seen.cfgRows.every((r) => r[1] === 'ended'),
      'one row per configuration, each ended', JSON.stringify(seen.cfgRows));
    const curves = seen.lines.filter((l) => l.label !== 'target');
    const want = done.config_list.map((c) => c.curve.map((p) => p[1]));
    check(curves.length === 3 && curves.every((l) =>
      JSON.stringify(l.ys) === JSON.stringify(want[l.cfg]) && l.ys.length === 6),
    'each configuration\'s line is its curve from the API (6 epochs)',
    JSON.stringify({curves, want}));
    const target = seen.lines.find((l) => l.label === 'target');
    check(target && target.ys.every((y) => y === 0.99), 'the target is drawn at y_target',
      JSON.stringify(target));
    fs.mkdirSync(ARTIFACTS, {recursive: true});
    await page.screenshot({path: path.join(ARTIFACTS, 'dashboard-sweep.png'), fullPage: true});
    check(errors.length === 0, 'the page logged no errors', errors.join('\n'));
  } catch (e) {
    check(false, 'the sweeps test ran to the end', e.stack);
  } finally {
    await b.close();
    const code = await d.stop();
    check(code === 0, 'slaqd exits cleanly', 'exit ' + code);
  }
  return tap.done();
}

process.exitCode = await main();
