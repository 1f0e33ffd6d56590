// The docrelay console: one page, no build step. Reads the jobs API (GET /v1/jobs, /v1/jobs/{id},
// /v1/deliveries/{id}) and the console's actions (/_console/*) on its own origin. Every value from the server
// enters the page as text (never as HTML). Lists refresh by polling at a bounded interval while visible.

/** How often the list and an open job page refresh, in ms. */
const POLL_MS = 1500;
const STATUSES = ['queued', 'processing', 'created', 'stored', 'failed'];
const FINAL = new Set(['stored', 'failed']);

const main = document.getElementById('main');
const live = document.getElementById('live');
let info = { stack: '', integrations: [], mappedData: false };
/** The running view's cleanup (its poll timer). */
let leave = () => {};

/** Builds an element: attributes (on* are listeners), then children (strings become text). */
function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'className') element.className = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Fetches JSON from the console's own origin; a problem answer throws with its detail. */
async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { accept: 'application/json', ...(options.body ? { 'content-type': 'application/json' } : {}) },
  });
  const text = await response.text();
  const body = text === '' ? {} : JSON.parse(text);
  if (!response.ok) {
    const error = new Error(body.detail || body.title || `HTTP ${response.status}`);
    error.status = response.status;
    error.body = body;
    throw error;
  }
  return body;
}

const post = (path, body) => api(path, { method: 'POST', body: JSON.stringify(body ?? {}) });
const announce = (text) => {
  live.textContent = text;
};
const time = (iso) => (iso ? new Date(iso).toLocaleString() : '');
const statusCell = (status) => h('span', { className: `status status-${status}` }, status);
const jobLink = (jobId) => h('a', { href: `#/jobs/${encodeURIComponent(jobId)}`, className: 'mono' }, jobId);
const bytes = (n) =>
  n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`;

/** Polls `tick` every POLL_MS while the view is current and the page visible; returns the stop function. */
function poll(tick) {
  let timer;
  let stopped = false;
  const loop = async () => {
    if (stopped) return;
    if (document.visibilityState === 'visible') {
      try {
        await tick();
      } catch (error) {
        announce(`Refresh failed: ${error.message}`);
      }
    }
    if (!stopped) timer = setTimeout(loop, POLL_MS);
  };
  loop();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function show(...children) {
  main.replaceChildren(...children);
  const heading = main.querySelector('h1');
  if (heading) {
    heading.setAttribute('tabindex', '-1');
    heading.focus({ preventScroll: true });
  }
}

// ---- Deliveries and their jobs ----

function listView(params) {
  const filters = {
    integration: params.get('integration') ?? '',
    status: params.get('status') ?? '',
    delivery: params.get('delivery') ?? '',
  };
  const setFilter = (name, value) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    location.hash = `#/?${next}`;
  };
  const integration = h(
    'select',
    { id: 'filter-integration', onchange: (e) => setFilter('integration', e.target.value) },
    h('option', { value: '' }, 'All integrations'),
    info.integrations.map((i) => h('option', { value: i.id, selected: i.id === filters.integration }, i.id)),
  );
  const status = h(
    'select',
    { id: 'filter-status', onchange: (e) => setFilter('status', e.target.value) },
    h('option', { value: '' }, 'Any status'),
    STATUSES.map((s) => h('option', { value: s, selected: s === filters.status }, s)),
  );
  const updated = h('p', { className: 'updated', 'aria-live': 'off' }, 'Loading…');
  const caption = h('caption', { className: 'visually-hidden' }, 'Deliveries and their jobs, newest first');
  const thead = h(
    'thead',
    {},
    h(
      'tr',
      {},
      ['Received', 'Delivery', 'Integration', 'Rule', 'Status', 'Attempts', 'Job'].map((t) =>
        h('th', { scope: 'col' }, t),
      ),
    ),
  );
  const table = h('table', { id: 'jobs' }, caption, thead);
  let more;
  /** Jobs of the pages asked for with "Older jobs" (the poll refreshes the newest page only). */
  let older = [];
  const seen = new Map();
  const render = (newest) => {
    const ids = new Set(newest.map((job) => job.jobId));
    const jobs = [...newest, ...older.filter((job) => !ids.has(job.jobId))];
    const byDelivery = new Map();
    for (const job of jobs) {
      const key = `${job.integration}\u0000${job.deliveryId}`;
      if (!byDelivery.has(key)) byDelivery.set(key, []);
      byDelivery.get(key).push(job);
    }
    const groups = [...byDelivery.values()].map((group) =>
      h(
        'tbody',
        { className: 'delivery' },
        group.map((job, i) => {
          const before = seen.get(job.jobId);
          const row = h(
            'tr',
            {
              'data-job': job.jobId,
              'data-status': job.status,
              className: before !== undefined && before !== job.status ? 'new' : undefined,
            },
            h('td', {}, i === 0 ? time(job.receivedAt) : ''),
            h(
              'td',
              { className: 'mono' },
              i === 0
                ? h('a', { href: `#/?delivery=${encodeURIComponent(job.deliveryId)}` }, job.deliveryId)
                : '',
            ),
            h('td', {}, i === 0 ? job.integration : ''),
            h('td', {}, job.rule),
            h('td', {}, statusCell(job.status)),
            h('td', {}, String(job.attempts)),
            h('td', {}, jobLink(job.jobId)),
          );
          if (before === undefined && seen.size > 0) row.classList.add('new');
          return row;
        }),
      ),
    );
    for (const job of jobs) {
      const before = seen.get(job.jobId);
      if (before !== undefined && before !== job.status) announce(`Job ${job.jobId} is ${job.status}`);
      seen.set(job.jobId, job.status);
    }
    table.replaceChildren(caption, thead, ...groups);
    if (jobs.length === 0) {
      table.append(h('tbody', {}, h('tr', {}, h('td', { colspan: 7, className: 'empty' }, 'No jobs yet.'))));
    }
  };
  const query = () => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
    q.set('limit', '50');
    return q;
  };
  const tick = async () => {
    const page = await api(`/v1/jobs?${query()}`);
    render(page.jobs);
    more.hidden = page.cursor === undefined;
    more.dataset.cursor = page.cursor ?? '';
    updated.textContent = `Live · updated ${new Date().toLocaleTimeString()}`;
  };
  more = h(
    'button',
    {
      type: 'button',
      hidden: true,
      onclick: async () => {
        const q = query();
        q.set('cursor', more.dataset.cursor);
        const page = await api(`/v1/jobs?${q}`);
        older = [...older, ...page.jobs];
        await tick();
        more.hidden = page.cursor === undefined;
        more.dataset.cursor = page.cursor ?? '';
      },
    },
    'Older jobs',
  );
  const heading = filters.delivery ? `Delivery ${filters.delivery}` : 'Deliveries';
  show(
    h('h1', {}, heading),
    h(
      'div',
      { className: 'filters' },
      h('label', { for: 'filter-integration' }, 'Integration', integration),
      h('label', { for: 'filter-status' }, 'Status', status),
      filters.delivery ? h('a', { href: '#/' }, 'All deliveries') : null,
      updated,
    ),
    table,
    h('p', {}, more),
  );
  return poll(tick);
}

// ---- One job ----

function jobView(jobId) {
  const facts = h('div', {}, h('p', { className: 'note' }, 'Loading…'));
  const message = h('p', { role: 'status' });
  const mapped = h('div');
  let job;
  const act = async (label, path, body) => {
    message.textContent = `${label}…`;
    try {
      const result = await post(path, body);
      const removed = result.removedFromDeadLetterQueue;
      const fromQueue =
        removed > 0
          ? ` (${removed === 1 ? 'its message' : `${removed} messages`} left the dead-letter queue)`
          : '';
      message.textContent = `${label}: ${result.from} → ${result.status}${fromQueue}`;
      await tick();
    } catch (error) {
      message.textContent = `${label} refused: ${error.message}`;
    }
  };
  const buttons = {
    replay: h(
      'button',
      { type: 'button', onclick: () => act('Replay', `/_console/jobs/${jobId}/replay`, {}) },
      'Replay',
    ),
    fresh: h(
      'button',
      {
        type: 'button',
        onclick: () => act('Replay fresh', `/_console/jobs/${jobId}/replay`, { fresh: true }),
      },
      'Replay with a new document',
    ),
    redrive: h(
      'button',
      { type: 'button', onclick: () => act('Redrive', `/_console/jobs/${jobId}/redrive`, {}) },
      'Redrive from the dead-letter queue',
    ),
  };
  const showMapped = h(
    'button',
    {
      type: 'button',
      onclick: async () => {
        mapped.replaceChildren(h('p', { className: 'note' }, 'Mapping the payload again…'));
        try {
          const document = await api(`/_console/jobs/${jobId}/mapped`);
          mapped.replaceChildren(
            h(
              'p',
              { className: 'note' },
              `Template ${document.templateId}${document.templateFileId ? ` (file ${document.templateFileId})` : ''}`,
            ),
            h('pre', { id: 'mapped-data' }, JSON.stringify(document.data, null, 2)),
          );
        } catch (error) {
          mapped.replaceChildren(problemView(error));
        }
      },
    },
    'Show the mapped data',
  );
  const tick = async () => {
    try {
      job = await api(`/v1/jobs/${encodeURIComponent(jobId)}`);
    } catch (error) {
      facts.replaceChildren(h('p', { className: 'error' }, error.message));
      return;
    }
    facts.replaceChildren(renderJob(job));
    buttons.replay.disabled = job.status !== 'failed';
    buttons.fresh.disabled = !FINAL.has(job.status);
    buttons.redrive.disabled = job.status !== 'failed';
  };
  show(
    h('h1', {}, 'Job ', h('span', { className: 'mono' }, jobId)),
    facts,
    h('div', { className: 'actions' }, buttons.replay, buttons.fresh, buttons.redrive),
    message,
    h('h2', {}, 'Mapped data'),
    info.mappedData
      ? h(
          'div',
          {},
          h(
            'p',
            { className: 'note' },
            'The rule mapped again from the sealed payload, with the current configuration.',
          ),
          showMapped,
          mapped,
        )
      : h('p', { className: 'note' }, 'Not available: this console cannot open sealed payloads.'),
  );
  return poll(async () => {
    await tick();
  });
}

function renderJob(job) {
  const error = job.error ?? job.lastError;
  const events = [
    h(
      'li',
      { className: 'ok' },
      h('strong', {}, 'Received'),
      ` ${time(job.receivedAt)} · delivery `,
      h(
        'a',
        { href: `#/?delivery=${encodeURIComponent(job.deliveryId)}`, className: 'mono' },
        job.deliveryId,
      ),
    ),
    ...(job.attemptErrors ?? []).map((attempt) =>
      h(
        'li',
        { className: 'bad' },
        h('strong', {}, `Attempt ${attempt.attempt}`),
        ` ${time(attempt.at)} · `,
        h('span', { className: 'mono' }, attempt.code),
        `: ${attempt.message}`,
      ),
    ),
    job.attempts > 0
      ? h(
          'li',
          { className: error && !job.document ? 'bad' : 'ok' },
          h('strong', {}, `${job.attempts} attempt${job.attempts === 1 ? '' : 's'}`),
          error ? [' · last error ', h('span', { className: 'mono' }, error.code), `: ${error.message}`] : '',
        )
      : h('li', {}, h('strong', {}, 'Waiting for a worker')),
    job.document
      ? h(
          'li',
          { className: 'ok' },
          h('strong', {}, 'Document'),
          ` ${job.document.name} · template ${job.document.templateId} · id `,
          h('span', { className: 'mono' }, job.document.id),
        )
      : null,
    job.files.length > 0
      ? h(
          'li',
          { className: 'ok' },
          h('strong', {}, 'Files'),
          h(
            'table',
            { className: 'files' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['File', 'Size', 'SHA-256', ''].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            h(
              'tbody',
              {},
              job.files.map((file) =>
                h(
                  'tr',
                  {},
                  h('td', {}, file.filename),
                  h('td', {}, bytes(file.size)),
                  h('td', { className: 'mono' }, file.sha256),
                  h(
                    'td',
                    {},
                    file.downloadUrl
                      ? h('a', { href: file.downloadUrl, download: file.filename }, 'Download')
                      : '',
                  ),
                ),
              ),
            ),
          ),
        )
      : null,
    h(
      'li',
      { className: job.status === 'stored' ? 'ok' : job.status === 'failed' ? 'bad' : '' },
      h('strong', {}, 'Now '),
      statusCell(job.status),
      ` · updated ${time(job.updatedAt)}`,
      job.error ? [' · ', h('span', { className: 'mono' }, job.error.code), `: ${job.error.message}`] : '',
    ),
  ];
  return h(
    'div',
    {},
    h(
      'dl',
      { className: 'facts' },
      h('dt', {}, 'Integration'),
      h('dd', {}, job.integration),
      h('dt', {}, 'Rule'),
      h('dd', {}, job.rule),
      h('dt', {}, 'Status'),
      h('dd', { id: 'job-status' }, statusCell(job.status)),
    ),
    h('h2', {}, 'Timeline'),
    h('ol', { className: 'timeline' }, events),
  );
}

function problemView(error) {
  const problems = error.body?.problems;
  return h(
    'div',
    { className: 'error', role: 'alert' },
    h('p', {}, error.message),
    Array.isArray(problems) && problems.length > 1
      ? h(
          'ul',
          {},
          problems.map((p) =>
            h(
              'li',
              {},
              `${p.rule ? `rule ${p.rule}: ` : ''}${p.property ? `${p.property}: ` : ''}${p.message}`,
            ),
          ),
        )
      : null,
  );
}

// ---- Mapping playground ----

function playgroundView() {
  const integration = h(
    'select',
    { id: 'pg-integration' },
    info.integrations.map((i) => h('option', { value: i.id }, i.id)),
  );
  const payload = h('textarea', { id: 'pg-payload', spellcheck: 'false' }, '{\n  \n}');
  const headers = h('input', {
    id: 'pg-headers',
    type: 'text',
    placeholder: '{"x-github-event": "release"}',
    size: 40,
  });
  const output = h('div', { id: 'pg-output', 'aria-live': 'polite' });
  const run = async (event) => {
    event.preventDefault();
    let body;
    let headerValues = {};
    try {
      body = JSON.parse(payload.value);
      if (headers.value.trim() !== '') headerValues = JSON.parse(headers.value);
    } catch (error) {
      output.replaceChildren(h('p', { className: 'error', role: 'alert' }, `Not JSON: ${error.message}`));
      return;
    }
    output.replaceChildren(h('p', { className: 'note' }, 'Mapping…'));
    try {
      const result = await post('/_console/map', {
        integration: integration.value,
        payload: body,
        headers: headerValues,
      });
      output.replaceChildren(
        result.documents.length === 0
          ? h('p', { className: 'note' }, 'No rule matches this payload: it would make no document.')
          : h(
              'div',
              {},
              result.documents.map((d) =>
                h(
                  'section',
                  {},
                  h('h2', {}, `Rule ${d.rule} → template ${d.templateId}`),
                  h('pre', {}, JSON.stringify(d.data, null, 2)),
                ),
              ),
            ),
      );
    } catch (error) {
      output.replaceChildren(problemView(error));
    }
  };
  show(
    h('h1', {}, 'Mapping playground'),
    h(
      'p',
      { className: 'note' },
      'Pick an integration, paste a payload, and see what each rule would send (as docrelay map does). Nothing is created.',
    ),
    h(
      'form',
      { onsubmit: run },
      h(
        'div',
        { className: 'filters' },
        h('label', { for: 'pg-integration' }, 'Integration', integration),
        h('label', { for: 'pg-headers' }, 'Headers (JSON, optional)', headers),
        h('button', { type: 'submit', className: 'primary' }, 'Map'),
      ),
      h(
        'div',
        { className: 'playground' },
        h('div', {}, h('label', { for: 'pg-payload' }, 'Payload (JSON)'), payload),
        output,
      ),
    ),
  );
  return () => {};
}

// ---- Routing ----

async function find(event) {
  event.preventDefault();
  const id = document.getElementById('search-input').value.trim();
  if (id === '') return;
  try {
    await api(`/v1/jobs/${encodeURIComponent(id)}`);
    location.hash = `#/jobs/${encodeURIComponent(id)}`;
    return;
  } catch {
    // Not a job id: try it as a delivery id.
  }
  try {
    await api(`/v1/deliveries/${encodeURIComponent(id)}`);
    location.hash = `#/?delivery=${encodeURIComponent(id)}`;
  } catch (error) {
    // 409: several integrations received this id; the list shows the jobs of each.
    if (error.status === 409) {
      location.hash = `#/?delivery=${encodeURIComponent(id)}`;
      return;
    }
    announce(`No job or delivery has the id ${id}`);
    show(h('h1', {}, 'Not found'), h('p', {}, `No job or delivery has the id ${id}.`));
  }
}

function route() {
  leave();
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, search] = hash.split('?');
  const job = /^\/jobs\/([^/]+)$/.exec(path);
  if (job) leave = jobView(decodeURIComponent(job[1]));
  else if (path === '/playground') leave = playgroundView();
  else leave = listView(new URLSearchParams(search ?? ''));
}

async function start() {
  try {
    info = await api('/_console/info');
    document.getElementById('stack').textContent = info.stack;
  } catch (error) {
    announce(`Console information unavailable: ${error.message}`);
  }
  document.getElementById('search').addEventListener('submit', find);
  window.addEventListener('hashchange', route);
  route();
}

start();
