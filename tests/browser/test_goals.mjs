/*
 * test_goals.mjs — jobs' goals on slaqd's dashboard in a real browser
 * (docs/deadlines.md, docs/dashboard.md).
 *
 * A real slaqd under --policy mlfs-h on one core runs two jobs: one with
 * a goal (a deadline two hours ahead, a required accuracy its metric
 * meets, urgency 7), one without. The job table must show the first
 * one's deadline slack, its accuracy met, its urgency and its place in
 * mlfs-h's order with the policy's terms, as /api/jobs says them; the
 * second one's goal cells must be "—" while its place in the order still
 * shows; under fair the places go. Clicking the job with the goal shows
 * its goal and terms in the detail.
 *
 * Output is TAP, as test_dashboard.mjs.
 *
 * Usage: node tests/browser/test_goals.mjs   (SLAQ_BUILD = build dir)
 */
import fs from 'node:fs';
import path from 'node:path';
import {ARTIFACTS, BIN, ROOT, Slaqd, launchBrowser, pageErrors, sleep, tap, waitFor}
  from './harness.mjs';

const TOY = path.join(BIN, 'slaq-toy-job');
const ok = tap.ok.bind(tap);

/* A job that reports its metric (0.92 at its third iteration) and then
 * waits to be stopped. */
const ACC_JOB = `
import sys, time
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, 'python'))})
import slaq
c = slaq.Client(metric_name="val_accuracy")
while not (c.poll(), c.connected and c.job_id)[1]:
    time.sleep(0.05)
for k, (loss, acc) in enumerate([(2.0, 0.5), (1.0, 0.8), (0.5, 0.92)]):
    c.report(k, loss, cpu_s=0.01, metric=acc)
while not c.should_stop():
    c.poll()
    time.sleep(0.05)
`;

/* The goal cells of a job's row: deadline, accuracy, urgency, priority
 * (the table's last four columns) and the priority cell's title. */
function goalCells(page, id) {
  return page.$eval(`#jobs tbody tr[data-job="${id}"]`, (tr) => {
    const c = [...tr.cells];
    return {slack: c.at(-4).textContent, accuracy: c.at(-3).textContent,
            urgency: c.at(-2).textContent, priority: c.at(-1).textContent,
            terms: c.at(-1).title};
  });
}

async function main() {
  console.log('TAP version 13');
  const b = await launchBrowser();
  if (b.skip) return tap.skip('jobs\' goals on the dashboard', b.skip);
  fs.mkdirSync(ARTIFACTS, {recursive: true});
  const d = new Slaqd(['--epoch', '0.3', '--grace', '1', '--cores', '1',
    '--enforce', 'none', '--policy', 'mlfs-h']);
  const errors = [];
  try {
    await d.start();
    const script = path.join(d.dir, 'acc.py');
    fs.writeFileSync(script, ACC_JOB);
    const goal = Number(d.slaq('submit', '--name', 'with-goal', '--max-cores', '1',
      '--deadline', '+2h', '--accuracy', '0.9', '--urgency', '7', '--',
      'python3', script));
    const plain = Number(d.slaq('submit', '--name', 'no-goal', '--max-cores', '1',
      '--', TOY, '--forever', '--iter-cpu', '0.004'));
    // Both in the policy's order, the goal's metric reported.
    const api = await waitFor(async () => {
      const jobs = (await d.api('/api/jobs')).jobs;
      const g = jobs.find((j) => j.id === goal), p = jobs.find((j) => j.id === plain);
      return g && p && g.priority && p.priority && g.accuracy_met === true ? {g, p} : null;
    }, 'both jobs ranked by mlfs-h, the metric reported', 30000);
    ok(api.g.priority.policy === 'mlfs-h' && api.g.priority.of === 2 &&
       api.g.priority.urgency === 1 && Math.abs(api.p.priority.urgency - 1 / 7) < 1e-9,
    'the API ranks both jobs under mlfs-h with their normalised urgency (7 of 7, 1 of 7)',
    JSON.stringify(api));

    const page = await b.ctx.newPage();
    pageErrors(page, errors);
    await page.goto(d.base + '/');
    await page.waitForFunction((ids) => ids.every((id) =>
      document.querySelector(`#jobs tbody tr[data-job="${id}"]`)), [goal, plain]);
    const heads = await page.$$eval('#jobs thead th', (ths) => ths.map((t) => t.textContent));
    ok(JSON.stringify(heads.slice(-4)) === '["deadline","accuracy","urgency","priority"]',
      'the table has deadline, accuracy, urgency and priority columns', JSON.stringify(heads));

    // The job with a goal: its slack, its accuracy met, its urgency, its
    // place and the policy's terms, as the API has them.
    const g = await waitFor(async () => {
      const c = await goalCells(page, goal);
      return c.accuracy.endsWith(': met') ? c : null;
    }, 'the goal\'s accuracy met on the page', 15000);
    const now = (await d.api('/api/jobs')).jobs;
    const gj = now.find((j) => j.id === goal);
    ok(/^due in (1\.9|2\.0) h$/.test(g.slack) && gj.slack > 7000 && gj.slack <= 7200,
      'its deadline slack: due in about 2 h', JSON.stringify({cell: g.slack, api: gj.slack}));
    ok(g.accuracy === '≥ 0.9000: met', 'its required accuracy and that its metric meets it',
      g.accuracy);
    ok(g.urgency === '7', 'its urgency', g.urgency);
    ok(/^#[12] of 2$/.test(g.priority) && g.priority === `#${gj.priority.rank} of 2`,
      'its place in mlfs-h\'s order, as the API says', JSON.stringify({cell: g.priority, api: gj.priority}));
    ok(/^mlfs-h #[12] of 2, key \d\.\d{3} = ML \d\.\d{3} \+ computation \d\.\d{3}; urgency 1\.00, 1\/I \d\.\d\d, loss drop \d\.\d\d, deadline \d\.\d\d, remaining \d\.\d\d, waiting \d\.\d\d; (holds cores|waits), load 0\.50$/.test(g.terms),
    'hovering its place gives the policy\'s key and terms', g.terms);

    // The job without a goal: "—" for its goal, but its place shows.
    const p = await goalCells(page, plain);
    ok(p.slack === '—' && p.accuracy === '—' && p.urgency === '—',
      'a job without a goal shows "—" for deadline, accuracy and urgency', JSON.stringify(p));
    ok(/^#[12] of 2$/.test(p.priority) && p.terms.includes('urgency 0.14,'),
      'it still has its place in the order, its urgency the lowest (1 of 7)', JSON.stringify(p));
    ok(p.priority !== g.priority, 'the two places differ', `${p.priority} / ${g.priority}`);

    // The detail of the job with the goal says it all in words.
    await page.click(`#jobs tbody tr[data-job="${goal}"]`);
    const text = await waitFor(async () => {
      const el = await page.$('#detail-goal');
      return el && await el.isVisible() ? el.textContent() : null;
    }, 'the goal in the detail', 15000);
    ok(text.includes('Goal: deadline due in') && text.includes('accuracy ≥ 0.9000: met') &&
       text.includes('urgency 7.') && text.includes('Priority: mlfs-h #'),
    'the detail states the goal and the policy\'s terms', text);
    await page.screenshot({path: path.join(ARTIFACTS, 'dashboard-goals.png'), fullPage: true});
    await page.click(`#jobs tbody tr[data-job="${plain}"]`);
    const plainText = await waitFor(async () => (await page.$eval('#detail-title',
      (e) => e.textContent)).includes('#' + plain) &&
      await page.$eval('#detail-goal', (e) => e.textContent), 'the detail of the job without a goal')
      .catch((e) => String(e));
    ok(!plainText.includes('Goal:') && plainText.startsWith('Priority: mlfs-h #'),
      'the detail of a job without a goal has its place but no goal', plainText);

    // Under fair there is no order of priority: the places go, the goal
    // stays; the detail of the job without a goal has nothing to say.
    d.slaq('policy', 'fair');
    const gone = await waitFor(async () => {
      const c = await goalCells(page, goal);
      return c.priority === '—' && c.terms === '' ? c : null;
    }, 'the places to go under fair').catch((e) => e);
    ok(gone.priority === '—' && /^due in/.test(gone.slack) && gone.urgency === '7',
      'under fair the place is "—" and the goal stays', JSON.stringify(gone));
    const quiet = await waitFor(async () => page.$eval('#detail-goal',
      (e) => e.hidden && e.textContent === ''), 'no goal line in the plain job\'s detail')
      .catch((e) => e);
    ok(quiet === true, 'under fair the detail of a job without a goal has no goal line',
      String(quiet));
    await sleep(300);
    ok(errors.length === 0, 'the page logged no errors', errors.join('\n'));
  } catch (e) {
    ok(false, 'the goals test ran to the end', e.stack);
  } finally {
    await b.close();
    const code = await d.stop({cancelJobs: true})
      .catch((e) => { console.log('# ' + e.message); return -1; });
    ok(code === 0, 'slaqd exits cleanly', 'exit ' + code);
  }
  return tap.done();
}

process.exitCode = await main();
