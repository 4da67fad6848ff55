/*
 * app.js — the dashboard's behaviour: poll slaqd's read-only API once per
 * epoch (at most once a second), redraw the charts and the job table in
 * place, and show the selected job's loss curve with its forecast.
 *
 * Polling rather than a push stream keeps slaqd's HTTP side stateless (it
 * runs on slaqd's one event-loop thread, where a held-open stream per
 * browser would be state to manage); the timeline itself lives in slaqd
 * (/api/timeline), so a reload or a second browser sees the same history,
 * and each poll asks only for the frames the page does not have yet.
 *
 * The Users panel shows how slaqd divides the cores between users and
 * their accounts (fair-share, /api/shares), refreshed on the same poll.
 *
 * The Chart.js objects are exposed as window.slaqDashboard.charts, and the
 * Users panel's rows as window.slaqDashboard.shares, so that tests (and
 * curious users in the console) can read what is drawn.
 */
'use strict';

const POLL_MIN_MS = 1000;
// The selected job's reported curve: new reports come from
// /api/jobs/ID/history a page at a time (each request O(page) in slaqd,
// whatever the history's length), at most HISTORY_PAGES pages per poll;
// beyond DETAIL_MAX_POINTS points every other one of the older half goes.
const HISTORY_PAGE = 1000;
const HISTORY_PAGES = 5;
const DETAIL_MAX_POINTS = 6000;
// Above this many jobs the charts' legends would take several rows: the
// job table's colour swatches name the lines instead.
const LEGEND_MAX = 8;

const state = {
  selected: null,    // job id whose detail is shown
  detail: null,      // its reported curve: {id, points, after} (followHistory)
  historyRequests: 0, // /history pages fetched (read by the browser test)
  timeline: null,    // slaqd's timeline as far as fetched (fetchTimeline)
  charts: {},        // loss, cores, detail (Chart.js objects)
  shares: null,      // the Users panel as drawn (drawShares)
  queries: new Map(),// query job id -> {box, chart}: the estimates charts
  startedAt: null,   // slaqd's start, wall-clock seconds
  pollMs: POLL_MIN_MS,
  epochS: 1,
  updates: 0,
  colour,
  fmtClock: (s, span) => fmtClock(s, span),
};
window.slaqDashboard = state;

/* A job's colour: hues a golden angle apart, so any number of jobs get
 * distinct colours (neighbouring ids far apart on the wheel), with
 * lightness alternating to separate the few hues that end up close. */
function colour(id) {
  const hue = Math.round(((id - 1) * 137.508) % 360);
  const light = [42, 55, 34][(id - 1) % 3];
  return 'hsl(' + hue + ', 70%, ' + light + '%)';
}

function withAlpha(hsl, a) {
  return hsl.replace('hsl(', 'hsla(').replace(')', ', ' + a + ')');
}

function fmt(v, digits) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return v.toFixed(digits);
}

function fmtLoss(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(3) : v.toPrecision(4);
}

function fmtDuration(s) {
  if (s === null || s === undefined || !Number.isFinite(s)) return '—';
  if (s === 0) return 'reached';
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
  if (s < 3600) return (s / 60).toFixed(1) + ' min';
  if (s < 86400) return (s / 3600).toFixed(1) + ' h';
  return (s / 86400).toFixed(1) + ' d';
}

function fmtPercent(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const p = 100 * v;
  return p < 0.01 ? '< 0.01 %' : p.toPrecision(2) + ' %';
}

/* Axis labels for seconds since start, in one format for the whole axis
 * (chosen by its extent `span`): "45 s" below two minutes, "12:05" below
 * an hour, "1:02:09" beyond. */
function fmtClock(s, span) {
  if (span < 120) return Math.round(s * 10) / 10 + ' s';
  const t = Math.round(s);
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = String(t % 60).padStart(2, '0');
  return span >= 3600 ? h + ':' + String(m).padStart(2, '0') + ':' + sec
                      : (h * 60 + m) + ':' + sec;
}

/* The time axis: from slaqd's start (never before it), labels in one
 * format. */
function timeAxis(options) {
  options.scales.x.min = 0;
  options.scales.x.ticks = {
    callback(value) { return fmtClock(value, this.max - this.min); },
  };
}

async function getJSON(path) {
  const r = await fetch(path, {cache: 'no-store'});
  if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
  return r.json();
}

/* --------------------------------------------------------------- charts */

function baseOptions(xTitle, yTitle) {
  return {
    animation: false,
    maintainAspectRatio: false,
    parsing: false,
    normalized: true,
    interaction: {mode: 'nearest', intersect: false},
    plugins: {legend: {position: 'bottom', labels: {boxWidth: 12}}},
    scales: {
      x: {type: 'linear', title: {display: true, text: xTitle}},
      y: {title: {display: true, text: yTitle}},
    },
  };
}

function makeCharts() {
  if (typeof Chart === 'undefined') {
    document.getElementById('chart-missing').hidden = false;
    return;
  }
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  const loss = baseOptions('time since slaqd started',
                           'normalised loss');
  timeAxis(loss);
  loss.scales.y.suggestedMin = 0;
  loss.scales.y.suggestedMax = 1;
  state.charts.loss = new Chart(document.getElementById('loss-chart'),
                                {type: 'line', data: {datasets: []},
                                 options: loss});
  const cores = baseOptions('time since slaqd started', 'cores');
  timeAxis(cores);
  cores.scales.y.stacked = true;
  cores.scales.y.beginAtZero = true;
  state.charts.cores = new Chart(document.getElementById('cores-chart'),
                                 {type: 'line', data: {datasets: []},
                                  options: cores});
  const detail = baseOptions('iteration', 'loss');
  state.charts.detail = new Chart(document.getElementById('detail-chart'),
                                  {type: 'line', data: {datasets: []},
                                   options: detail});
}

/* Replaces a chart's datasets by id, keeping Chart.js's objects (and the
 * user's legend toggles) for jobs that were already drawn. */
function setDatasets(chart, wanted) {
  const have = new Map(chart.data.datasets.map((d) => [d.slaqId, d]));
  chart.data.datasets = wanted.map((w) => {
    const d = have.get(w.slaqId);
    if (!d) return w;
    d.data = w.data;
    d.label = w.label;
    return d;
  });
  if (chart.options.plugins.legend)
    chart.options.plugins.legend.display = wanted.length <= LEGEND_MAX;
  chart.update('none');
}

/*
 * The timeline's time points, seconds since slaqd started, with the idle
 * stretches made explicit. slaqd records no frames while no job runs, so
 * two neighbouring frames can be minutes apart; joined by a straight
 * line, a job's cores (or losses) would ramp across that stretch. Where
 * the gap is over 2.5 recording intervals, a point one interval after
 * the earlier frame and one before the later one are added, at which no
 * job holds cores (index -1).
 */
function timePoints(tl) {
  const t0 = state.startedAt ?? (tl.t.length ? tl.t[0] : 0);
  const step = (tl.stride || 1) * state.epochS;
  const pts = [];
  tl.t.forEach((t, i) => {
    const x = Math.max(0, t - t0);
    if (i > 0 && t - tl.t[i - 1] > 2.5 * step) {
      const prev = pts[pts.length - 1].x;
      pts.push({x: prev + step, i: -1}, {x: Math.max(prev + step, x - step), i: -1});
    }
    pts.push({x, i});
  });
  return pts;
}

function drawTimeline(tl, jobsById) {
  if (!state.charts.loss) return;
  const xs = timePoints(tl);
  const lossSets = [];
  const coreSets = [];
  const ids = Object.keys(tl.jobs).map(Number).sort((a, b) => a - b);
  for (const id of ids) {
    const s = tl.jobs[id];
    const job = jobsById.get(id);
    const label = '#' + id + ' ' + (job ? job.name : s.name);
    const c = colour(id);
    const lossPts = [];
    const corePts = [];
    xs.forEach(({x, i}) => {
      if (i < 0) {
        // an idle stretch: no cores, and the loss line breaks
        if (lossPts.length && lossPts[lossPts.length - 1].y !== null)
          lossPts.push({x, y: null});
        corePts.push({x, y: 0});
        return;
      }
      if (s.pred_norm_loss[i] !== null) lossPts.push({x, y: s.pred_norm_loss[i]});
      corePts.push({x, y: s.cores[i] ?? 0});
    });
    if (lossPts.length) {
      lossSets.push({slaqId: id, label, data: lossPts, borderColor: c,
                     backgroundColor: c, pointRadius: 0, borderWidth: 2,
                     tension: 0.2});
    }
    coreSets.push({slaqId: id, label, data: corePts, borderColor: c,
                   backgroundColor: withAlpha(c, 0.7), fill: 'stack', pointRadius: 0,
                   borderWidth: 1});
  }
  setDatasets(state.charts.loss, lossSets);
  setDatasets(state.charts.cores, coreSets);
}

async function drawDetail(jobsById) {
  const box = document.getElementById('detail');
  if (state.selected === null) {
    box.hidden = true;
    return;
  }
  const job = jobsById.get(state.selected);
  if (!job) {
    state.selected = null;
    box.hidden = true;
    return;
  }
  box.hidden = false;
  document.getElementById('detail-title').textContent =
    'Job #' + job.id + ' ' + job.name + ' — loss and forecast';
  const goal = document.getElementById('detail-goal');
  const parts = [];
  if (hasGoal(job)) {
    parts.push('Goal: deadline ' + fmtSlack(job) + ', accuracy ' +
               fmtAccuracy(job) + ', urgency ' + job.urgency + '.');
  }
  if (job.priority) parts.push('Priority: ' + priorityTerms(job.priority) + '.');
  goal.textContent = parts.join(' ');
  goal.hidden = parts.length === 0;
  const fc = await getJSON('/api/jobs/' + job.id + '/forecast');
  const points = await followHistory(job.id, fc.history);
  const hint = document.getElementById('detail-hint');
  if (fc.forecast.length) {
    hint.textContent = 'Solid: reported loss. Dashed: the predictor\'s ' +
      'current forecast from iteration ' + fmt(fc.k0, 0) +
      ' on (predicted final loss ' + fmtLoss(fc.final_loss) + ').';
  } else {
    hint.textContent = job.state === 'running' || job.state === 'stopping'
      ? 'No reports yet: the forecast appears after the first report.'
      : 'The job is ' + job.state + ': no forecast is kept for ended jobs.';
  }
  if (!state.charts.detail) return;
  const c = colour(job.id);
  const sets = [{slaqId: 'reported', label: 'reported loss',
                 data: points,
                 borderColor: c, backgroundColor: c, pointRadius: 0,
                 borderWidth: 2}];
  if (fc.forecast.length) {
    sets.push({slaqId: 'forecast', label: 'forecast',
               data: fc.forecast.filter((p) => p.loss !== null)
                 .map((p) => ({x: p.iter, y: p.loss})),
               borderColor: '#1d2430', backgroundColor: '#1d2430',
               borderDash: [6, 4], pointRadius: 0, borderWidth: 2});
  }
  setDatasets(state.charts.detail, sets);
}

/* ------------------------------------------------------------- queries */

const MAX_QUERY_CHARTS = 12;

/* One chart per approximate query (the newest MAX_QUERY_CHARTS): its
 * first result value per mini-batch with the bounds as a shaded band. */
async function drawQueries(jobs) {
  const qs = jobs.filter((j) => j.kind === 'query')
    .sort((a, b) => b.id - a.id).slice(0, MAX_QUERY_CHARTS)
    .sort((a, b) => a.id - b.id);
  const card = document.getElementById('queries');
  card.hidden = qs.length === 0;
  const grid = document.getElementById('query-charts');
  const want = new Set(qs.map((j) => j.id));
  for (const [id, q] of state.queries) {
    if (!want.has(id)) {
      if (q.chart) q.chart.destroy();
      q.box.remove();
      state.queries.delete(id);
    }
  }
  const data = await Promise.all(qs.map((j) =>
    getJSON('/api/jobs/' + j.id + '/estimates').catch(() => null)));
  qs.forEach((job, i) => {
    const e = data[i];
    let q = state.queries.get(job.id);
    if (!q) {
      const box = document.createElement('div');
      box.className = 'query';
      box.dataset.job = job.id;
      const h = document.createElement('h3');
      const cb = document.createElement('div');
      cb.className = 'canvas-box small';
      const canvas = document.createElement('canvas');
      cb.appendChild(canvas);
      box.append(h, cb);
      grid.appendChild(box);
      let chart = null;
      if (typeof Chart !== 'undefined') {
        const o = baseOptions('mini-batch', 'estimate');
        o.plugins.legend.display = false;
        chart = new Chart(canvas, {type: 'line', data: {datasets: []},
                                   options: o});
      }
      q = {box, chart};
      state.queries.set(job.id, q);
    }
    const pts = e ? e.points : [];
    const p = e && e.progress !== null && e.progress !== undefined
      ? ' · P ' + fmt(e.progress, 3) : '';
    q.box.querySelector('h3').textContent = '#' + job.id + ' ' + job.name +
      ' · ' + job.state + ' · mini-batch ' + job.iter + p;
    if (!q.chart) return;
    const c = colour(job.id);
    const val = (arr) => pts.filter((pt) => arr(pt) !== null)
      .map((pt) => ({x: pt.iter, y: arr(pt)}));
    setDatasets(q.chart, [
      {slaqId: 'lower', label: 'lower bound', data: val((pt) => pt.lower[0]),
       borderColor: withAlpha(c, 0.4), pointRadius: 0, borderWidth: 1},
      {slaqId: 'upper', label: 'upper bound', data: val((pt) => pt.upper[0]),
       borderColor: withAlpha(c, 0.4), backgroundColor: withAlpha(c, 0.18),
       fill: '-1', pointRadius: 0, borderWidth: 1},
      {slaqId: 'estimate', label: 'estimate', data: val((pt) => pt.est[0]),
       borderColor: c, backgroundColor: c, pointRadius: 1.5, borderWidth: 2},
    ]);
  });
}

/*
 * The selected job's reported loss, kept between polls: when a job is
 * selected, the evenly thinned overview that came with its forecast (at
 * most 500 reports, picked by index seeks); after that only the reports
 * since the last one held, from /history pages. Returns the points.
 */
async function followHistory(id, overview) {
  if (!state.detail || state.detail.id !== id) {
    state.detail = {id, points: overview.map((p) => ({x: p.iter, y: p.loss})),
                    after: overview.length ? overview.at(-1).iter : -1};
  }
  const det = state.detail;
  for (let page = 0; page < HISTORY_PAGES; page++) {
    const h = await getJSON('/api/jobs/' + id + '/history?after=' + det.after +
                            '&limit=' + HISTORY_PAGE);
    state.historyRequests++;
    if (state.detail !== det) return det.points; // another job was picked
    for (const r of h.rows) det.points.push({x: r[0], y: r[1]});
    if (h.rows.length) det.after = h.rows.at(-1)[0];
    if (h.next === null) break;
  }
  if (det.points.length > DETAIL_MAX_POINTS) {
    const half = det.points.length >> 1;
    det.points = det.points.slice(0, half).filter((p, i) => i % 2 === 0)
      .concat(det.points.slice(half));
  }
  return det.points;
}

/* ---------------------------------------------------------------- goals */

/* A job's goal (docs/deadlines.md), as slaq ls says it; '—' for none. */
function hasGoal(j) {
  return j.deadline !== null || j.accuracy !== null || j.urgency > 1;
}

function fmtSlack(j) {
  if (j.slack === null || j.slack === undefined) return '—';
  const d = fmtDuration(Math.abs(j.slack) || 1e-9);
  if (j.slack < 0) return 'late by ' + d;
  return (typeof j.ended === 'number' ? 'on time by ' : 'due in ') + d;
}

function fmtAccuracy(j) {
  if (j.accuracy === null || j.accuracy === undefined) return '—';
  const met = j.accuracy_met === true ? 'met'
    : j.accuracy_met === false ? 'not met' : 'no metric yet';
  return (j.direction === 'min' ? '≤ ' : '≥ ') + fmtLoss(j.accuracy) + ': ' + met;
}

/* Why it is where it is under mlfs-h, mlfs-rl or mlfs: the policy's key
 * and the normalised terms it is made of (the job's "priority"). */
function priorityTerms(p) {
  const f = (v) => fmt(v, 2);
  const key = p.score !== null && p.score !== undefined
    ? 'key ' + fmt(p.key, 3) + ' (the network\'s score; MLF-H\'s P ' +
      fmt(p.ml + p.computation, 3) + ')'
    : 'key ' + fmt(p.key, 3) + ' = ML ' + fmt(p.ml, 3) + ' + computation ' +
      fmt(p.computation, 3);
  return p.policy + ' #' + p.rank + ' of ' + p.of + ', ' + key +
    '; urgency ' + f(p.urgency) + ', 1/I ' + f(p.iteration) +
    ', loss drop ' + f(p.loss_drop) + ', deadline ' + f(p.deadline) +
    ', remaining ' + f(p.remaining) + ', waiting ' + f(p.waiting) + '; ' +
    (p.holds_cores ? 'holds cores' : 'waits') + ', load ' + f(p.load);
}

/* ---------------------------------------------------------------- table */

function cell(tr, text, cls) {
  const td = document.createElement('td');
  if (cls) td.className = cls;
  td.textContent = text;
  tr.appendChild(td);
  return td;
}

/* A job's owner. Under fair-share the owner is a user of the shares tree,
 * usually by the same name; when the tree knows them by another (uid-N,
 * for an owner whose name is taken by an account, such as root), that
 * name follows in brackets, so the row can be found in the Users panel. */
function userCell(tr, j) {
  const td = cell(tr, j.user);
  const sh = j.share;
  if (!sh) return td;
  if (sh.user !== j.user) {
    const alias = document.createElement('span');
    alias.className = 'alias';
    alias.textContent = ' (' + sh.user + ')';
    td.appendChild(alias);
  }
  td.title = 'fair-share user ' + sh.user + ' in account ' + sh.account +
    ': share ' + fmtShare(sh.share) + ', given ' + fmt(sh.part, 2) +
    ' cores, its jobs hold ' + fmt(sh.cores, 2);
  return td;
}

function drawTable(jobs) {
  const body = document.querySelector('#jobs tbody');
  const rows = [];
  // Active jobs first, newest first within each group.
  const active = (j) => j.state === 'running' || j.state === 'stopping';
  // (a pending job waits for room on a node: not active here)
  const sorted = jobs.slice().sort((a, b) =>
    (active(b) - active(a)) || (b.id - a.id));
  for (const j of sorted) {
    const tr = document.createElement('tr');
    tr.dataset.job = j.id;
    if (j.id === state.selected) tr.className = 'selected';
    const idCell = cell(tr, '');
    const sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = colour(j.id);
    idCell.append(sw, String(j.id));
    cell(tr, j.name);
    userCell(tr, j);
    const st = document.createElement('span');
    st.className = 'state ' + j.state;
    st.textContent = j.state;
    st.title = j.reason || '';
    const stCell = cell(tr, '');
    stCell.appendChild(st);
    // A controller's job runs on a node (docs/cluster-runtime.md).
    if (j.node && j.node !== 'local') {
      const nd = document.createElement('span');
      nd.className = 'node';
      nd.textContent = ' on ' + j.node;
      stCell.appendChild(nd);
    }
    cell(tr, String(j.iter), 'num');
    cell(tr, fmtLoss(j.loss), 'num');
    cell(tr, fmt(j.pred_norm_loss, 3), 'num');
    cell(tr, active(j) ? fmt(j.cores, 2) : '—', 'num');
    cell(tr, fmt(j.gain, 4), 'num');
    cell(tr, active(j) ? fmtDuration(j.eta90_s) : '—', 'num');
    cell(tr, fmtPercent(j.forecast_norm_error), 'num');
    cell(tr, fmtSlack(j), 'num goal-slack');
    cell(tr, fmtAccuracy(j), 'goal-accuracy');
    cell(tr, hasGoal(j) ? String(j.urgency) : '—', 'num goal-urgency');
    const pr = cell(tr, j.priority ? '#' + j.priority.rank + ' of ' +
                    j.priority.of : '—', 'num goal-priority');
    if (j.priority) pr.title = priorityTerms(j.priority);
    tr.addEventListener('click', () => {
      state.selected = state.selected === j.id ? null : j.id;
      refresh();
    });
    rows.push(tr);
  }
  if (!rows.length) {
    const tr = document.createElement('tr');
    const td = cell(tr, 'No jobs.', 'none');
    td.colSpan = 15;
    rows.push(tr);
  }
  body.replaceChildren(...rows);
}

/* ---------------------------------------------------------------- users */

// A user with no jobs whose decayed usage would print as 0.0 core-seconds
// has nothing to show: such rows are left out (accounts never are).
const USAGE_SHOWN_MIN = 0.05;

/* A normalised share (0..1) as a percentage with one decimal. */
function fmtShare(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return (100 * v).toFixed(1) + ' %';
}

/* Decayed usage: core-seconds below an hour's worth, core-hours beyond. */
function fmtUsage(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return v < 3600 ? v.toFixed(1) + ' core-s' : (v / 3600).toFixed(2) + ' core-h';
}

/* An entry's caps, as slaq share writes them: "4 cores, 2 jobs" or "—"
 * (max_cores null and max_jobs 0 mean no cap). */
function fmtCaps(e) {
  const caps = [];
  if (typeof e.max_cores === 'number') caps.push(e.max_cores + ' cores');
  if (e.max_jobs > 0) caps.push(e.max_jobs + ' jobs');
  return caps.length ? caps.join(', ') : '—';
}

/*
 * The Users panel from an /api/shares reply (null when it could not be
 * fetched): one row per account and user, in slaqd's order (the root,
 * then each account followed by its children), the name indented by its
 * depth. Users without jobs and without usage are left out to keep the
 * table short; how many is said under it. What is drawn is kept in
 * state.shares for tests.
 */
function drawShares(sh, error) {
  const off = document.getElementById('users-off');
  const note = document.getElementById('users-note');
  const body = document.querySelector('#users-table tbody');
  if (!sh) {
    off.hidden = false;
    off.textContent = 'slaqd did not serve the shares between users (' +
      (error || 'no reply') + ').';
    note.hidden = true;
    body.replaceChildren();
    state.shares = {fairShare: null, rows: [], hidden: 0};
    return;
  }
  off.hidden = sh.fair_share;
  off.textContent = 'Fair-share is off (slaqd --fair-share off): the policy ' +
    'divides the cores among all jobs alike; the accounts below are kept ' +
    'but not used.';
  document.getElementById('users-halflife').textContent = sh.half_life_s > 0
    ? 'Usage halves every ' + fmtDuration(sh.half_life_s) + '.'
    : 'Past usage is ignored (share-half-life 0).';
  const rows = [];
  const drawn = [];
  let hidden = 0;
  for (const e of sh.entries) {
    if (e.kind === 'user' && e.jobs === 0 && !(e.usage >= USAGE_SHOWN_MIN)) {
      hidden++;
      continue;
    }
    const tr = document.createElement('tr');
    tr.dataset.share = e.name;
    tr.className = 'share-' + e.kind;
    const name = cell(tr, e.name);
    // Indented by its depth in the tree, as slaq share indents it.
    name.style.paddingLeft = (0.6 + 1.2 * e.depth) + 'em';
    cell(tr, e.kind);
    cell(tr, String(e.weight), 'num');
    cell(tr, fmtShare(e.share), 'num');
    cell(tr, fmt(e.factor, 3), 'num');
    cell(tr, fmt(e.part, 2), 'num');
    cell(tr, fmt(e.cores, 2), 'num');
    const jobs = cell(tr, e.running + ' / ' + e.jobs, 'num');
    if (e.jobs > e.running) {
      jobs.title = (e.jobs - e.running) + ' waiting (held back by a cap, ' +
        'or for room on a node)';
    }
    cell(tr, fmtUsage(e.usage), 'num');
    cell(tr, fmtCaps(e));
    rows.push(tr);
    drawn.push({name: e.name, kind: e.kind, depth: e.depth,
                cells: [...tr.cells].map((c) => c.textContent), entry: e});
  }
  body.replaceChildren(...rows);
  note.hidden = hidden === 0;
  note.textContent = hidden === 1
    ? '1 user without jobs or usage is not shown.'
    : hidden + ' users without jobs or usage are not shown.';
  state.shares = {fairShare: sh.fair_share, rows: drawn, hidden};
}

/* ---------------------------------------------------------------- loop */

function drawStatus(st, jobs) {
  document.getElementById('policy').textContent = st.policy;
  document.getElementById('cores').textContent =
    fmt(st.cores_allocated, 1) + ' / ' + fmt(st.cores, 1);
  document.getElementById('epoch').textContent =
    '#' + st.epoch + ' every ' + st.epoch_s + ' s';
  document.getElementById('jobcount').textContent =
    st.jobs_active + ' active / ' + st.jobs_total;
  document.getElementById('reports').textContent = String(st.reports_total);
  document.getElementById('empty').hidden = jobs.length > 0;
  // Stacked allocations never exceed the cores slaqd divides.
  const cores = state.charts.cores;
  if (cores && cores.options.scales.y.max !== st.cores) {
    cores.options.scales.y.max = st.cores;
    cores.update('none');
  }
}

/* The page's copy of slaqd's timeline, extended with only the frames
 * after the last one it has; fetched whole again when slaqd thinned it
 * (its stride changed) or restarted (another pid). */
async function fetchTimeline(pid) {
  const tl = state.timeline;
  const since = tl && tl.pid === pid && tl.t.length ? tl.t[tl.t.length - 1] : 0;
  const inc = await getJSON('/api/timeline?since=' + encodeURIComponent(since));
  if (since !== 0 && tl.stride !== inc.stride_epochs) {
    state.timeline = null; // thinned since: start over with all of it
    return fetchTimeline(pid);
  }
  return mergeTimeline(pid, inc, since === 0);
}

/* ℓ = (loss − end) / (first − end) in [0, 1], as slaqd computes it
 * (slaq_norm_loss): 1 for a curve that never fell, null when unknown. */
function normLoss(loss, first, end) {
  if (loss === null || first === null || end === null) return null;
  const span = first - end;
  if (!(span > 0)) return 1;
  const r = (first - loss) / span;
  return 1 - Math.min(1, Math.max(0, r));
}

/* Appends the frames of inc (an /api/timeline reply) to the page's copy,
 * or starts a new copy with them when fresh. The page keeps each job's
 * raw losses and draws all of them with the newest first loss and L_end
 * slaqd sent, so a refit that moves L_end rescales the whole line (as a
 * fresh fetch would show it) rather than starting a new level. */
function mergeTimeline(pid, inc, fresh) {
  let tl = state.timeline;
  if (fresh || !tl) {
    tl = state.timeline = {pid, stride: inc.stride_epochs, t: [], jobs: {}};
  }
  const before = tl.t.length;
  tl.t.push(...inc.t);
  for (const [id, s] of Object.entries(inc.jobs)) {
    let mine = tl.jobs[id];
    if (!mine) {
      mine = tl.jobs[id] = {id: s.id, name: s.name,
                            loss: new Array(before).fill(null),
                            cores: new Array(before).fill(null)};
    }
    mine.loss.push(...s.loss);
    mine.cores.push(...s.cores);
    mine.first_loss = s.first_loss;
    mine.end_loss = s.end_loss;
  }
  for (const mine of Object.values(tl.jobs)) {
    while (mine.cores.length < tl.t.length) {
      mine.loss.push(null);
      mine.cores.push(null);
    }
    mine.pred_norm_loss = mine.loss.map((l) => normLoss(l, mine.first_loss ?? null,
                                                   mine.end_loss ?? null));
  }
  return tl;
}

/* Draws everything but the selected job's detail; returns the jobs by id. */
function draw(st, ls, tl) {
  state.startedAt = st.started ?? Date.now() / 1000 - st.uptime_s;
  state.epochS = st.epoch_s;
  state.pollMs = Math.max(POLL_MIN_MS, st.epoch_s * 1000);
  const byId = new Map(ls.jobs.map((j) => [j.id, j]));
  drawStatus(st, ls.jobs);
  drawTimeline(tl, byId);
  drawTable(ls.jobs);
  state.updates++;
  const conn = document.getElementById('conn');
  conn.textContent = 'live · updated ' + new Date().toLocaleTimeString();
  conn.className = 'conn';
  return byId;
}

/* The first paint, from /api/initial.js (loaded before this script): the
 * page shows the charts at its load event, before any fetch returns. */
function drawInitial() {
  const init = window.slaqInitial;
  if (!init || !init.status || !init.jobs || !init.timeline) return;
  const tl = mergeTimeline(init.status.pid, init.timeline, true);
  draw(init.status, init.jobs, tl);
}

let busy = false;
async function refresh() {
  if (busy) return;
  busy = true;
  const conn = document.getElementById('conn');
  try {
    // The shares are fetched alongside: should they fail, the Users panel
    // says so and the rest of the page still updates.
    let sharesError = null;
    const [st, ls, sh] = await Promise.all([
      getJSON('/api/status'), getJSON('/api/jobs'),
      getJSON('/api/shares').catch((e) => { sharesError = e.message; return null; })]);
    const tl = await fetchTimeline(st.pid);
    const byId = draw(st, ls, tl);
    drawShares(sh, sharesError);
    await drawQueries(ls.jobs);
    await drawDetail(byId);
  } catch (e) {
    conn.textContent = 'cannot reach slaqd (' + e.message + '); retrying';
    conn.className = 'conn bad';
  } finally {
    busy = false;
  }
}

async function loop() {
  await refresh();
  setTimeout(loop, state.pollMs);
}

makeCharts();
drawInitial();
loop();
