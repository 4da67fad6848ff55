/*
 * sweeps.js — the dashboard's sweeps: a table of slaqd's sweeps
 * (/api/sweeps) and, for the one clicked (the newest by default), every
 * configuration's learning curve (its metric against the time since the
 * sweep started, the target as a dashed line), its class and probability
 * (/api/sweeps/ID). Polls every two seconds while the page is open.
 *
 * The chart is exposed as window.slaqSweeps.chart for tests.
 */
'use strict';

const sweeps = {selected: null, chart: null, last: null, updates: 0};
window.slaqSweeps = sweeps;

function swColour(i) {
  const hue = Math.round((i * 137.508) % 360);
  return 'hsl(' + hue + ', 65%, ' + [42, 55, 34][i % 3] + '%)';
}

function swFmt(v, d) {
  return v === null || v === undefined || !Number.isFinite(v) ? '—'
    : v.toFixed(d);
}

function swDur(s) {
  if (s === null || s === undefined || !Number.isFinite(s)) return '—';
  if (s < 60) return s.toFixed(1) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s';
  return (s / 3600).toFixed(2) + ' h';
}

function swCell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function swDrawList(list) {
  const box = document.getElementById('sweeps');
  box.hidden = list.length === 0;
  const tbody = document.querySelector('#sweep-table tbody');
  tbody.textContent = '';
  for (const w of list) {
    const tr = document.createElement('tr');
    tr.dataset.sweep = w.id;
    tr.className = 'clickable' + (w.id === sweeps.selected ? ' selected' : '');
    const c = w.counts || {};
    swCell(tr, String(w.id));
    swCell(tr, w.name);
    swCell(tr, w.state, 'state-' + w.state);
    swCell(tr, w.policy);
    swCell(tr, String(w.configs), 'num');
    swCell(tr, [c.running, c.suspended, c.killed, c.ended].join(' / '), 'num');
    swCell(tr, swDur(w.elapsed_s), 'num');
    swCell(tr, swDur(w.time_to_target_s), 'num');
    swCell(tr, swFmt(w.best, 4), 'num');
    tr.addEventListener('click', () => {
      sweeps.selected = w.id;
      swPoll();
    });
    tbody.appendChild(tr);
  }
}

function swDrawDetail(w) {
  document.getElementById('sweep-detail').hidden = false;
  document.getElementById('sweep-title').textContent =
    'Sweep ' + w.id + ': ' + w.name + ' (' + w.state + ')';
  document.getElementById('sweep-hint').textContent =
    w.metric + (w.direction === 'max' ? ' ≥ ' : ' ≤ ') + w.y_target +
    ' within ' + w.epochs + ' epochs, ' + w.slots + ' slots, policy ' +
    w.policy + (w.time_to_target_s !== null
      ? '; reached after ' + swDur(w.time_to_target_s) + ' by configuration ' +
        w.reached_config
      : '') + (w.note ? ' — ' + w.note : '');
  const cfgs = w.config_list || [];
  const tbody = document.querySelector('#sweep-configs tbody');
  tbody.textContent = '';
  for (const c of cfgs) {
    const tr = document.createElement('tr');
    tr.dataset.config = c.index;
    const sw = swCell(tr, String(c.index));
    sw.style.borderLeft = '6px solid ' + swColour(c.index);
    swCell(tr, c.state, 'state-' + c.state);
    swCell(tr, c.class || '—', c.class ? 'class-' + c.class : '');
    swCell(tr, swFmt(c.p, 3), 'num');
    swCell(tr, String(c.epochs), 'num');
    swCell(tr, swFmt(c.best, 4), 'num');
    swCell(tr, c.job === null ? '—' : String(c.job));
    swCell(tr, Object.entries(c.params).map(([k, v]) =>
      k + '=' + (typeof v === 'number' ? Number(v.toPrecision(4)) : v))
      .join(' '));
    tbody.appendChild(tr);
  }
  if (typeof Chart === 'undefined') return;
  const datasets = cfgs.filter((c) => c.curve && c.curve.length).map((c) => ({
    label: 'cfg ' + c.index + (c.class ? ' (' + c.class + ')' : ''),
    data: c.curve.map((p) => ({x: p[2], y: p[1]})),
    borderColor: swColour(c.index),
    backgroundColor: swColour(c.index),
    pointRadius: 1.5,
    borderWidth: 1.5,
    config: c.index,
  }));
  const xs = datasets.flatMap((d) => d.data.map((p) => p.x));
  const xmax = Math.max(1, w.elapsed_s || 0, ...xs);
  datasets.push({
    label: 'target', data: [{x: 0, y: w.y_target}, {x: xmax, y: w.y_target}],
    borderColor: '#888', borderDash: [6, 4], pointRadius: 0, borderWidth: 1,
  });
  if (!sweeps.chart) {
    sweeps.chart = new Chart(document.getElementById('sweep-chart'), {
      type: 'line',
      data: {datasets},
      options: {
        animation: false, parsing: false, maintainAspectRatio: false,
        scales: {
          x: {type: 'linear', title: {display: true, text: 'seconds since the sweep started'}},
          y: {title: {display: true, text: w.metric}},
        },
        plugins: {legend: {display: datasets.length <= 12}},
      },
    });
  } else {
    sweeps.chart.data.datasets = datasets;
    sweeps.chart.options.scales.y.title.text = w.metric;
    sweeps.chart.update('none');
  }
}

async function swPoll() {
  try {
    const r = await fetch('/api/sweeps', {cache: 'no-store'});
    const list = (await r.json()).sweeps || [];
    if (sweeps.selected === null && list.length)
      sweeps.selected = list[list.length - 1].id;
    swDrawList(list);
    if (sweeps.selected !== null) {
      const d = await fetch('/api/sweeps/' + sweeps.selected,
        {cache: 'no-store'});
      if (d.ok) {
        sweeps.last = (await d.json()).sweep;
        swDrawDetail(sweeps.last);
      }
    }
    sweeps.updates++;
  } catch (e) {
    // slaqd away: the jobs' part of the page says so; try again later.
  }
}

swPoll();
setInterval(swPoll, 2000);
