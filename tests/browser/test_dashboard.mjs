/*
 * test_dashboard.mjs — slaqd's dashboard in a real browser.
 *
 * Starts a real slaqd (on a temporary state directory and a free port) with
 * real job processes (slaq-toy-job), opens the page in Debian's headless
 * Chromium driven by playwright-core, and checks what the page draws
 * against what the API says: the empty state, the charts' Chart.js data,
 * the job table with each job's user, the Users panel (the shares between
 * users, against /api/shares, and with fair-share off), a job submitted
 * later appearing, a policy change, and a job's loss curve with its
 * forecast. Saves screenshots under BUILD/test-artifacts/.
 *
 * Output is TAP ("ok N - ...", "not ok N - ..."), counted by
 * scripts/run-tests.sh. If Chromium cannot run at all on this machine the
 * whole file reports one "ok 1 - ... # SKIP reason" line and exits 0.
 *
 * Usage: node tests/browser/test_dashboard.mjs   (SLAQ_BUILD = build dir)
 */
import fs from 'node:fs';
import path from 'node:path';
import {ARTIFACTS, BIN, Slaqd, launchBrowser, pageErrors, sleep, tap, waitFor}
  from './harness.mjs';

const TOY = path.join(BIN, 'slaq-toy-job');
const ok = tap.ok.bind(tap);

/* Submits slaq-toy-job JOBARGS under name; returns its id. */
function submit(d, name, ...jobArgs) {
  return Number(d.slaq('submit', '--name', name, '--', TOY, ...jobArgs));
}

/* What the page's Chart.js objects hold, by chart: [{id,label,points}]. */
function readCharts(page) {
  return page.evaluate(() => {
    const out = {};
    for (const [name, chart] of Object.entries(window.slaqDashboard.charts)) {
      out[name] = chart.data.datasets.map((d) => ({
        id: d.slaqId, label: d.label, points: d.data.map((p) => [p.x, p.y])}));
    }
    out.updates = window.slaqDashboard.updates;
    return out;
  });
}

/* The job table's rows as {id, cells: {header: text}}, keyed by the
 * column headers so that a new column does not shift the checks. */
function readTable(page) {
  return page.evaluate(() => {
    const heads = [...document.querySelectorAll('#jobs thead th')].map((t) => t.textContent);
    return [...document.querySelectorAll('#jobs tbody tr[data-job]')].map((tr) => ({
      id: Number(tr.dataset.job),
      cells: Object.fromEntries([...tr.cells].map((c, i) => [heads[i], c.textContent]))}));
  });
}

/* The Users panel as the DOM shows it: {visible, off, note, rows}, each
 * row {name, kind, indent (px), cells: {header: text}}; and what app.js
 * says it drew (window.slaqDashboard.shares). */
function readUsers(page) {
  return page.evaluate(() => {
    const card = document.getElementById('users');
    if (!card) return null;
    const heads = [...card.querySelectorAll('thead th')].map((t) => t.textContent);
    const off = document.getElementById('users-off');
    const note = document.getElementById('users-note');
    return {
      visible: card.offsetParent !== null,
      off: off && !off.hidden ? off.textContent : null,
      note: note && !note.hidden ? note.textContent : null,
      rows: [...card.querySelectorAll('tbody tr[data-share]')].map((tr) => ({
        name: tr.dataset.share,
        indent: parseFloat(getComputedStyle(tr.cells[0]).paddingLeft),
        cells: Object.fromEntries([...tr.cells].map((c, i) => [heads[i], c.textContent]))})),
      drawn: window.slaqDashboard.shares,
    };
  });
}

/* Waits until the Users panel's row for `name` shows the cores, part and
 * jobs that /api/shares serves at about the same time (both move every
 * epoch, so they are compared until they agree); returns {row, api} or
 * the error. */
function usersAgree(page, d, name, timeoutMs = 15000) {
  return waitFor(async () => {
    const u = await readUsers(page);
    const api = (await d.api('/api/shares')).entries.find((e) => e.name === name);
    const row = u && u.rows.find((r) => r.name === name);
    return row && api && row.cells.cores === api.cores.toFixed(2) &&
      row.cells.part === api.part.toFixed(2) &&
      row.cells.jobs === api.running + ' / ' + api.jobs ? {row, api, u} : null;
  }, `the Users panel's ${name} to match /api/shares`, timeoutMs).catch((e) => e);
}

/* docs/metrics.md's normalised loss of one loss (slaq_norm_loss). */
function normLossRef(loss, first, end) {
  if (![loss, first, end].every((v) => typeof v === 'number')) return NaN;
  if (!(first - end > 0)) return 1;
  return 1 - Math.min(1, Math.max(0, (first - loss) / (first - end)));
}

/* True when ys (drawn) is the start of want (the API's series, later). */
function prefixOf(ys, want) {
  if (ys.length === 0 || ys.length > want.length) return false;
  return ys.every((y, i) => Math.abs(y - want[i]) <= 1e-6 * Math.max(1, Math.abs(want[i])));
}

async function main() {
  console.log('TAP version 13');
  const b = await launchBrowser();
  if (b.skip) return tap.skip('dashboard in a real browser', b.skip);
  fs.mkdirSync(ARTIFACTS, {recursive: true});
  const d = new Slaqd(['--epoch', '0.3', '--grace', '1', '--cores', '2',
    '--enforce', 'none']);
  // A second slaqd, with fair-share off, for the Users panel's notice.
  const noShares = new Slaqd(['--epoch', '0.3', '--cores', '2', '--enforce', 'none',
    '--fair-share', 'off']);
  const errors = [];
  try {
    await d.start();
    // An account for the Users panel: "lab", with a user "idle" who never
    // runs a job (the panel leaves such users out, but shows accounts).
    d.slaq('account', 'add', 'lab');
    d.slaq('account', 'add', 'idle', '--user', '--account', 'lab');
    const page = await b.ctx.newPage();
    pageErrors(page, errors);

    // An empty slaqd: the page loads, Chart.js is there, the empty state shows.
    await page.goto(d.base + '/');
    await page.waitForFunction(() => window.slaqDashboard && window.slaqDashboard.updates > 0);
    ok(await page.evaluate(() => typeof Chart === 'function'), 'Chart.js is served by slaqd and loads');
    ok(await page.isVisible('#empty'), 'the empty state shows while there are no jobs');
    ok((await page.textContent('#policy')) === 'slaq', 'the header shows the policy in force');
    ok((await page.textContent('#jobs tbody')).includes('No jobs.'), 'the empty table says so');
    const emptyUsers = await waitFor(async () => {
      const u = await readUsers(page);
      return u && u.rows.length ? u : null;
    }, 'the Users panel', 10000).catch((e) => e);
    ok(emptyUsers.visible && emptyUsers.off === null &&
       JSON.stringify(emptyUsers.rows.map((r) => r.name)) === '["root","lab"]',
    'the Users panel shows the root and the empty account, not the idle user',
    JSON.stringify(emptyUsers));
    ok(emptyUsers.note === '1 user without jobs or usage is not shown.',
      'the Users panel says a user is left out', emptyUsers.note);
    await page.screenshot({path: path.join(ARTIFACTS, 'dashboard-empty.png'), fullPage: true});

    // Three jobs converging at different rates.
    const ids = [submit(d, 'fast', '--forever', '--iter-cpu', '0.004', '--rate', '0.08'),
      submit(d, 'medium', '--forever', '--iter-cpu', '0.004', '--rate', '0.03'),
      submit(d, 'slow', '--forever', '--iter-cpu', '0.004', '--rate', '0.01')];
    await waitFor(async () => {
      const c = await readCharts(page);
      return ids.every((id) => c.loss.some((s) => s.id === id && s.points.length >= 4) &&
                        c.cores.some((s) => s.id === id && s.points.length >= 4));
    }, 'every job in both charts', 30000);
    ok(!(await page.isVisible('#empty')), 'the empty state hides once jobs exist');

    // The charts hold what /api/timeline serves (the API has moved on since
    // the page drew, so the drawn series must be a prefix of the API's).
    // The page scales a job's whole line by the newest first loss and L_end
    // it has fetched (a refit rescales the line; it never starts a new level).
    const drawn = await readCharts(page);
    const norms = await page.evaluate(() => Object.fromEntries(
      Object.entries(window.slaqDashboard.timeline.jobs).map(
        ([id, s]) => [id, {first: s.first_loss, end: s.end_loss}])));
    const tl = await d.api('/api/timeline');
    for (const id of ids) {
      const api = tl.jobs[String(id)];
      const lossSet = drawn.loss.find((s) => s.id === id);
      const h = norms[String(id)] || {};
      const apiLoss = (api.loss || []).filter((v) => v !== null).map((l) =>
        normLossRef(l, h.first, h.end));
      ok(typeof h.first === 'number' && typeof h.end === 'number' &&
         prefixOf(lossSet.points.map((p) => p[1]), apiLoss),
        `job ${id}: the loss chart holds its losses from /api/timeline, scaled by one L_end`,
        JSON.stringify({drawn: lossSet.points.slice(0, 5), api: apiLoss.slice(0, 5), held: h}));
      const ys = lossSet.points.map((p) => p[1]);
      ok(ys.every((y) => y >= 0 && y <= 1) && ys.at(-1) < ys[0] &&
         ys.every((y, i) => i === 0 || y <= ys[i - 1] + 1e-9),
      `job ${id}: its normalised loss falls over time and never rises (its loss only falls)`,
      JSON.stringify(ys.slice(0, 12)));
      const coreSet = drawn.cores.find((s) => s.id === id);
      ok(prefixOf(coreSet.points.map((p) => p[1]), api.cores.map((v) => v ?? 0)),
        `job ${id}: the cores chart holds its allocations from /api/timeline`);
      ok(lossSet.label.includes('#' + id) && lossSet.label.includes(api.name),
        `job ${id}: the legend names it`);
    }
    const times = drawn.cores[0].points.map((p) => p[0]);
    ok(times.every((t, i) => i === 0 || t > times[i - 1]), 'the time axis increases');
    const stacked = await page.evaluate(() =>
      window.slaqDashboard.charts.cores.options.scales.y.stacked === true);
    ok(stacked, 'the cores chart is stacked');
    const lastSum = drawn.cores.reduce((s, set) => s + set.points.at(-1)[1], 0);
    ok(lastSum > 0 && lastSum <= 2 + 1e-6, 'stacked cores never exceed the 2 cores slaqd divides',
      lastSum);

    // The job table: one row per job with the API's state and numbers.
    await waitFor(async () => (await page.$$('#jobs tbody tr[data-job]')).length === 3, 'three rows');
    const rows = await readTable(page);
    ok(ids.every((id) => rows.some((r) => r.id === id && r.cells.state === 'running')),
      'the table lists every job as running', JSON.stringify(rows));
    ok(rows.every((r) => Number(r.cells.iterations) > 0 && r.cells.loss !== '—' &&
                   r.cells.cores !== '—'),
    'the table shows iterations, loss and cores', JSON.stringify(rows));
    ok(rows.some((r) => r.cells['next-epoch gain'] !== '—') &&
       rows.some((r) => r.cells['time to 90 %'] !== '—'),
    'the table shows next-epoch gain and time to 90 %', JSON.stringify(rows));

    // Each job's user: its owner, and under fair-share the user the
    // shares tree knows it by (in brackets when that name differs, as
    // uid-0 for root, whose name is the tree's root).
    const apiJobs = (await d.api('/api/jobs')).jobs.filter((j) => ids.includes(j.id));
    const owner = apiJobs[0].share && apiJobs[0].share.user;
    ok(typeof owner === 'string' && apiJobs.every((j) => j.share && j.share.user === owner),
      'the API names one fair-share user for the three jobs', JSON.stringify(apiJobs.map((j) => j.share)));
    ok(apiJobs.every((j) => rows.some((r) => r.id === j.id && r.cells.user ===
      (owner === j.user ? j.user : j.user + ' (' + owner + ')'))),
    'the table shows each job\'s user', JSON.stringify(rows.map((r) => r.cells.user)));

    // The Users panel: the jobs' user holds the cores /api/shares says,
    // with its three jobs running; moved into the account "lab", it is
    // drawn under it (indented further) and the account holds its cores.
    const mine = await usersAgree(page, d, owner);
    ok(mine.row !== undefined && mine.row.cells.kind === 'user' &&
       mine.row.cells.jobs === '3 / 3' && mine.api.cores > 0 && mine.api.cores <= 2 + 1e-6,
    'the Users panel lists the jobs\' user with the cores, part and jobs of /api/shares',
    String(mine.message || JSON.stringify(mine)));
    d.slaq('account', 'set', owner, '--account', 'lab');
    const moved = await waitFor(async () => {
      const u = await readUsers(page);
      const names = u.rows.map((r) => r.name);
      const lab = u.rows.find((r) => r.name === 'lab');
      const me = u.rows.find((r) => r.name === owner);
      return names.indexOf(owner) === names.indexOf('lab') + 1 && me.indent > lab.indent &&
        lab.cells.jobs === '3 / 3' ? u : null;
    }, 'the user under "lab" on the page', 15000).catch((e) => e);
    ok(moved.rows !== undefined, 'the Users panel draws the user under its account, indented',
      String(moved.message || ''));
    const lab = await usersAgree(page, d, 'lab');
    ok(lab.row !== undefined && lab.row.cells.kind === 'account' && lab.api.cores > 0,
      'the account "lab" shows the cores of /api/shares', String(lab.message || JSON.stringify(lab)));
    const shown = await readUsers(page);
    ok(shown.drawn && JSON.stringify(shown.drawn.rows.map((r) => r.cells)) ===
       JSON.stringify(shown.rows.map((r) => Object.values(r.cells))),
    'window.slaqDashboard.shares holds what the Users panel draws');
    const apiShares = await d.api('/api/shares');
    const share = apiShares.entries.find((e) => e.name === owner).share;
    ok(shown.rows.find((r) => r.name === owner).cells.share === (100 * share).toFixed(1) + ' %' &&
       !shown.rows.some((r) => r.name === 'idle'),
    'the Users panel shows the share as a percentage and still leaves the idle user out',
    JSON.stringify(shown.rows));

    // A job that appears in the API appears on the page without a reload.
    const late = submit(d, 'late-arrival', '--forever', '--iter-cpu', '0.004', '--rate', '0.05');
    await waitFor(async () => (await d.api('/api/jobs')).jobs.some((j) => j.id === late),
      'the new job in the API');
    const seen = await waitFor(async () => {
      const c = await readCharts(page);
      const row = await page.$(`#jobs tbody tr[data-job="${late}"]`);
      return row && c.cores.some((s) => s.id === late) && c.loss.some((s) => s.id === late);
    }, 'the new job on the page', 15000).catch((e) => e);
    ok(seen === true, 'a job submitted later appears in the table and both charts', seen);
    ok(await page.evaluate(() => performance.getEntriesByType('navigation').length === 1),
      'the page never reloaded');

    // The policy in force updates live.
    d.slaq('policy', 'fair');
    const pol = await waitFor(async () => (await page.textContent('#policy')) === 'fair',
      'the new policy on the page').catch((e) => e);
    ok(pol === true, 'a policy change shows without a reload', pol);

    // Clicking a job shows its loss curve with the forecast ahead of it.
    await page.click(`#jobs tbody tr[data-job="${ids[2]}"]`);
    const det = await waitFor(async () => {
      const c = await readCharts(page);
      const rep = c.detail.find((s) => s.id === 'reported');
      const fc = c.detail.find((s) => s.id === 'forecast');
      return rep && fc && rep.points.length > 3 && fc.points.length > 3 ? {rep, fc} : null;
    }, 'the detail chart', 15000);
    ok(await page.isVisible('#detail'), 'clicking a job opens its detail');
    const lastIter = det.rep.points.at(-1)[0];
    ok(det.fc.points[0][0] >= det.rep.points[0][0] &&
       det.fc.points.at(-1)[0] > lastIter, 'the forecast is drawn ahead of the reported curve',
    JSON.stringify({lastIter, fc: [det.fc.points[0], det.fc.points.at(-1)]}));
    const fcApi = await d.api(`/api/jobs/${ids[2]}/forecast`);
    ok(fcApi.forecast.length > 0 && det.fc.points.every((p) => Number.isFinite(p[1])),
      'the forecast comes from /api/jobs/ID/forecast');
    // The reported curve keeps up through /api/jobs/ID/history pages: it
    // reaches an iteration the job reported after the detail opened, once
    // per iteration, in order.
    const target = (await d.api(`/api/jobs/${ids[2]}`)).job.iter + 3;
    const followed = await waitFor(async () => {
      const c = await readCharts(page);
      const rep = c.detail.find((s) => s.id === 'reported');
      return rep && rep.points.at(-1)[0] >= target ? rep : null;
    }, 'the reported curve to follow the job', 20000).catch((e) => e);
    const xs = followed.points ? followed.points.map((p) => p[0]) : [];
    ok(xs.length > 0 && xs.every((x, i) => i === 0 || x > xs[i - 1]),
      'the reported curve follows the job, each iteration once and in order',
      String(followed.message || xs.slice(-5)));
    const pages = await page.evaluate(() => window.slaqDashboard.historyRequests);
    ok(pages > 0, 'new reports come from /api/jobs/ID/history pages', pages);
    await sleep(1200); // one more refresh, so the screenshot is settled
    await page.screenshot({path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true});
    ok(fs.statSync(path.join(ARTIFACTS, 'dashboard.png')).size > 10000,
      'a screenshot is saved as build/test-artifacts/dashboard.png');
    // The time axis: from slaqd's start, never before it, every label in
    // one format (all "N s", or all "m:ss", or all "h:mm:ss").
    const axis = await page.evaluate(() => {
      const x = window.slaqDashboard.charts.cores.scales.x;
      return {min: x.min, labels: x.ticks.map((t) => t.label)};
    });
    const formats = [/^\d+(\.\d)? s$/, /^\d+:\d\d$/, /^\d+:\d\d:\d\d$/];
    ok(axis.min >= 0, 'the time axis starts at slaqd\'s start, not before', JSON.stringify(axis));
    ok(formats.some((re) => axis.labels.length > 1 && axis.labels.every((l) => re.test(l))),
      'the time axis labels share one format', JSON.stringify(axis.labels));

    const mixed = await page.evaluate(() =>
      [30, 100, 200].map((v) => window.slaqDashboard.fmtClock(v, 200)));
    ok(JSON.stringify(mixed) === '["0:30","1:40","3:20"]',
      'a 200 s axis labels 100 s as 1:40, like 3:20 (not "100 s")', JSON.stringify(mixed));

    // Distinct colours for many jobs (24: a palette of 10 repeated).
    const colours = await page.evaluate(() =>
      Array.from({length: 24}, (_, i) => window.slaqDashboard.colour(i + 1)));
    ok(new Set(colours).size === 24, '24 jobs get 24 different colours', colours.join(' '));

    // An idle stretch (every job ended, then a new one): no line ramps
    // across it. slaqd records no frames while idle, so two neighbouring
    // frames are seconds apart; between points further apart than a few
    // epochs, a job's cores must stay flat (at 0), not slope.
    for (const j of (await d.api('/api/jobs')).jobs) {
      if (j.state === 'running') d.slaq('cancel', String(j.id));
    }
    await waitFor(async () => (await d.api('/api/jobs')).jobs.every((j) => j.state !== 'running' &&
      j.state !== 'stopping'), 'every job to end');
    await sleep(3000); // ten epochs of 0.3 s with nothing running
    const after = submit(d, 'after-idle', '--forever', '--iter-cpu', '0.004', '--rate', '0.05');
    await waitFor(async () => (await readCharts(page)).cores.some(
      (s) => s.id === after && s.points.filter((p) => p[1] > 0).length >= 3),
    'the job after the idle stretch in the cores chart', 20000);
    const idle = await readCharts(page);
    const ramps = [];
    for (const set of idle.cores) {
      for (let i = 1; i < set.points.length; i++) {
        const [x0, y0] = set.points[i - 1];
        const [x1, y1] = set.points[i];
        if (x1 - x0 > 3 * 0.3 && Math.abs(y1 - y0) > 1e-9) ramps.push({id: set.id, from: [x0, y0], to: [x1, y1]});
      }
    }
    ok(ramps.length === 0, 'no cores line ramps across the idle stretch', JSON.stringify(ramps.slice(0, 3)));
    const lossGapJoined = idle.loss.some((set) => set.points.some((p, i) => i > 0 &&
      p[0] - set.points[i - 1][0] > 3 * 0.3 && p[1] !== null && set.points[i - 1][1] !== null));
    ok(!lossGapJoined, 'no loss line is drawn across the idle stretch');

    // The first render after load shows data, before any fetch returns:
    // a second page whose API requests never answer still has the charts
    // and the table at its load event (from /api/initial.js).
    const page2 = await b.ctx.newPage();
    page2.on('pageerror', (e) => errors.push(String(e)));
    const held = [];
    for (const route of ['**/api/status', '**/api/jobs', '**/api/timeline*']) {
      await page2.route(route, (r) => { held.push(r); }); // never answered
    }
    await page2.goto(d.base + '/', {waitUntil: 'load'});
    const first = await page2.evaluate(() => ({
      updates: window.slaqDashboard.updates,
      conn: document.getElementById('conn').textContent,
      rows: document.querySelectorAll('#jobs tbody tr[data-job]').length,
      points: window.slaqDashboard.charts.cores.data.datasets.reduce((n, d) => n + d.data.length, 0),
    }));
    ok(first.updates >= 1 && first.rows > 0 && first.points > 0,
      'the first render after load shows the charts and the table', JSON.stringify(first));
    ok(!first.conn.includes('connecting'), 'the first render does not say "connecting…"', first.conn);
    await page2.screenshot({path: path.join(ARTIFACTS, 'dashboard-first-paint.png')});
    for (const r of held) r.abort().catch(() => {});
    await page2.close();

    // With fair-share off the Users panel says so.
    await noShares.start();
    const page3 = await b.ctx.newPage();
    pageErrors(page3, errors);
    await page3.goto(noShares.base + '/');
    const off = await waitFor(async () => {
      const u = await readUsers(page3);
      return u && u.drawn && u.drawn.fairShare === false ? u : null;
    }, 'the Users panel of a slaqd without fair-share', 10000).catch((e) => e);
    ok(off.visible && typeof off.off === 'string' && off.off.startsWith('Fair-share is off'),
      'with fair-share off the Users panel says so', String(off.message || JSON.stringify(off)));
    await page3.close();

    ok(errors.length === 0, 'the page logged no errors', errors.join('\n'));
  } catch (e) {
    ok(false, 'the dashboard test ran to the end', e.stack);
  } finally {
    await b.close();
    const code = await d.stop({cancelJobs: true})
      .catch((e) => { console.log('# ' + e.message); return -1; });
    ok(code === 0, 'slaqd exits cleanly', 'exit ' + code);
    const code2 = await noShares.stop().catch((e) => { console.log('# ' + e.message); return -1; });
    ok(code2 === 0, 'the slaqd without fair-share exits cleanly', 'exit ' + code2);
  }
  return tap.done();
}

process.exitCode = await main();
