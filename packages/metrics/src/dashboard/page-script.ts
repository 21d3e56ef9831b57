/**
 * The page's script, run by the browser (inline, allowed by its hash in the CSP). Plain ES2020
 * with no library: it opens the event stream next to the page, draws each limiter's chart as an
 * SVG polyline and writes every text with `textContent` (key text is never parsed as HTML).
 * It holds no backtick and no `${`, so it sits in this template literal as written.
 */
export const PAGE_SCRIPT = `
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var OUTCOMES = ['admitted', 'delayed', 'limited'];
  var W = 600, H = 150, TOP = 8, BOTTOM = 18, LEFT = 44;
  var main = document.querySelector('main');
  var status = document.querySelector('.status');
  var cards = new Map();
  var capacity = 300;
  var intervalMs = 1000;
  var number = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });
  var whole = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function svg(tag, attributes) {
    var node = document.createElementNS(SVG, tag);
    for (var name in attributes) node.setAttribute(name, attributes[name]);
    return node;
  }
  function fact(parent, label, name) {
    var box = el('div', '', label);
    var value = el('span', '', '0');
    value.setAttribute('data-fact', name);
    box.appendChild(value);
    parent.appendChild(box);
    return value;
  }

  function cardOf(name) {
    var card = cards.get(name);
    if (card) return card;
    var empty = main.querySelector('.empty');
    if (empty) empty.remove();
    var root = el('section', 'limiter');
    root.setAttribute('data-limiter', name);
    var title = el('h2');
    title.appendChild(el('span', 'name', name));
    var store = el('span', 'badge', '');
    var health = el('span', 'badge', '');
    health.hidden = true;
    title.appendChild(store);
    title.appendChild(health);
    root.appendChild(title);

    var rates = el('div', 'rates');
    var rateValues = {};
    OUTCOMES.forEach(function (outcome) {
      var item = el('span');
      item.appendChild(el('span', 'dot ' + outcome));
      var value = el('b', '', '0');
      value.setAttribute('data-rate', outcome);
      rateValues[outcome] = value;
      item.appendChild(value);
      item.appendChild(document.createTextNode(' ' + outcome + '/s'));
      rates.appendChild(item);
    });
    root.appendChild(rates);

    var chart = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', role: 'img' });
    chart.appendChild(svg('line', { class: 'grid', x1: LEFT, x2: W, y1: TOP, y2: TOP }));
    chart.appendChild(svg('line', { class: 'grid', x1: LEFT, x2: W, y1: H - BOTTOM, y2: H - BOTTOM }));
    var maxLabel = svg('text', { class: 'axis', x: LEFT - 6, y: TOP + 4, 'text-anchor': 'end' });
    var zeroLabel = svg('text', { class: 'axis', x: LEFT - 6, y: H - BOTTOM + 4, 'text-anchor': 'end' });
    zeroLabel.textContent = '0';
    var startLabel = svg('text', { class: 'axis', x: LEFT, y: H - 4 });
    var endLabel = svg('text', { class: 'axis', x: W, y: H - 4, 'text-anchor': 'end' });
    endLabel.textContent = 'now';
    [maxLabel, zeroLabel, startLabel, endLabel].forEach(function (node) { chart.appendChild(node); });
    var lines = {};
    OUTCOMES.forEach(function (outcome) {
      lines[outcome] = svg('polyline', { class: outcome, points: '' });
      chart.appendChild(lines[outcome]);
    });
    root.appendChild(chart);

    // Adaptive limiters only: the limit over time, and the requests in flight under it.
    var adaptiveChart = svg('svg', { class: 'chart adaptive', viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', role: 'img' });
    adaptiveChart.appendChild(svg('line', { class: 'grid', x1: LEFT, x2: W, y1: TOP, y2: TOP }));
    adaptiveChart.appendChild(svg('line', { class: 'grid', x1: LEFT, x2: W, y1: H - BOTTOM, y2: H - BOTTOM }));
    var adaptiveMax = svg('text', { class: 'axis', x: LEFT - 6, y: TOP + 4, 'text-anchor': 'end' });
    var adaptiveZero = svg('text', { class: 'axis', x: LEFT - 6, y: H - BOTTOM + 4, 'text-anchor': 'end' });
    adaptiveZero.textContent = '0';
    adaptiveChart.appendChild(adaptiveMax);
    adaptiveChart.appendChild(adaptiveZero);
    var adaptiveLines = {
      limit: svg('polyline', { class: 'limit', points: '' }),
      inFlight: svg('polyline', { class: 'admitted', points: '' })
    };
    adaptiveChart.appendChild(adaptiveLines.limit);
    adaptiveChart.appendChild(adaptiveLines.inFlight);
    var adaptiveBox = el('div', 'adaptive');
    adaptiveBox.appendChild(el('h3', '', 'Adaptive limit and requests in flight'));
    adaptiveBox.appendChild(adaptiveChart);
    var adaptiveFacts = el('div', 'facts');
    var adaptiveNow = {
      limit: fact(adaptiveFacts, 'limit now', 'adaptive-limit'),
      inFlight: fact(adaptiveFacts, 'in flight now', 'adaptive-in-flight'),
      queued: fact(adaptiveFacts, 'queued now', 'adaptive-queued'),
      shed: fact(adaptiveFacts, 'shed', 'shed')
    };
    adaptiveBox.appendChild(adaptiveFacts);
    adaptiveBox.hidden = true;
    root.appendChild(adaptiveBox);

    var facts = el('div', 'facts');
    var totals = {
      admitted: fact(facts, 'admitted', 'admitted'),
      delayed: fact(facts, 'delayed', 'delayed'),
      limited: fact(facts, 'limited', 'limited')
    };
    root.appendChild(facts);
    // Concurrency limiters only: what is held and waiting now.
    var nowFacts = el('div', 'facts');
    var now = { inFlight: fact(nowFacts, 'in flight now', 'in-flight'), queued: fact(nowFacts, 'queued now', 'queued') };
    nowFacts.hidden = true;
    root.appendChild(nowFacts);
    // Store health and degraded decisions: a remote store's only (an in-process one cannot fail).
    var storeFacts = el('div', 'facts');
    totals.insurance = fact(storeFacts, 'degraded: insurance', 'insurance');
    totals['fail-open'] = fact(storeFacts, 'degraded: fail-open', 'fail-open');
    totals['fail-closed'] = fact(storeFacts, 'degraded: fail-closed', 'fail-closed');
    var storeValues = {
      latency: fact(storeFacts, 'store p50 / p90 / p99 (1 min)', 'latency'),
      errors: fact(storeFacts, 'store timeouts / errors', 'errors'),
      cache: fact(storeFacts, 'block-cache hits / lease calls', 'cache')
    };
    storeFacts.hidden = true;
    root.appendChild(storeFacts);
    var dryRun = el('div', 'note', '');
    dryRun.hidden = true;
    root.appendChild(dryRun);

    root.appendChild(el('h3', '', 'Hot keys (about the last minute)'));
    var table = el('table');
    var head = el('tr');
    ['key', 'requests', 'admitted', 'limited', 'limited share', '± error'].forEach(function (text) {
      head.appendChild(el('th', '', text));
    });
    table.appendChild(head);
    var body = el('tbody');
    table.appendChild(body);
    root.appendChild(table);

    main.appendChild(root);
    card = {
      series: { admitted: [], delayed: [], limited: [] },
      store: store, health: health, rates: rateValues, lines: lines, maxLabel: maxLabel,
      startLabel: startLabel, totals: totals, storeFacts: storeFacts, storeValues: storeValues,
      dryRun: dryRun, hotKeys: body, nowFacts: nowFacts, now: now,
      adaptive: { limit: [], inFlight: [] }, adaptiveBox: adaptiveBox, adaptiveLines: adaptiveLines,
      adaptiveMax: adaptiveMax, adaptiveNow: adaptiveNow
    };
    cards.set(name, card);
    return card;
  }

  function polyline(values, top) {
    var dx = (W - LEFT) / Math.max(1, capacity - 1);
    var offset = capacity - values.length;
    var coords = [];
    for (var i = 0; i < values.length; i++) {
      var x = LEFT + (offset + i) * dx;
      var y = H - BOTTOM - (values[i] / top) * (H - BOTTOM - TOP);
      coords.push(x.toFixed(1) + ',' + y.toFixed(1));
    }
    return coords.join(' ');
  }

  function roundTop(max) {
    // A round top for the axis: 1, 2 or 5 times a power of ten.
    var step = Math.pow(10, Math.floor(Math.log10(max)));
    return [1, 2, 5, 10].map(function (m) { return m * step; }).find(function (v) { return v >= max; });
  }

  function drawAdaptive(card) {
    var values = card.adaptive;
    if (values.limit.length === 0) return;
    card.adaptiveBox.hidden = false;
    var max = 1;
    values.limit.concat(values.inFlight).forEach(function (v) { if (v > max) max = v; });
    var top = roundTop(max);
    card.adaptiveMax.textContent = whole.format(top);
    card.adaptiveLines.limit.setAttribute('points', polyline(values.limit, top));
    card.adaptiveLines.inFlight.setAttribute('points', polyline(values.inFlight, top));
  }

  function draw(card) {
    var points = 0, max = 1;
    OUTCOMES.forEach(function (outcome) {
      var values = card.series[outcome];
      points = Math.max(points, values.length);
      for (var i = 0; i < values.length; i++) if (values[i] > max) max = values[i];
    });
    // A round top for the axis: 1, 2 or 5 times a power of ten.
    var step = Math.pow(10, Math.floor(Math.log10(max)));
    var top = [1, 2, 5, 10].map(function (m) { return m * step; }).find(function (v) { return v >= max; });
    card.maxLabel.textContent = whole.format(top) + '/s';
    var span = capacity * intervalMs / 1000;
    card.startLabel.textContent = '-' + (span >= 120 ? Math.round(span / 60) + ' min' : Math.round(span) + ' s');
    var dx = (W - LEFT) / Math.max(1, capacity - 1);
    OUTCOMES.forEach(function (outcome) {
      var values = card.series[outcome];
      var offset = capacity - values.length;
      var coords = [];
      for (var i = 0; i < values.length; i++) {
        var x = LEFT + (offset + i) * dx;
        var y = H - BOTTOM - (values[i] / top) * (H - BOTTOM - TOP);
        coords.push(x.toFixed(1) + ',' + y.toFixed(1));
      }
      card.lines[outcome].setAttribute('points', coords.join(' '));
    });
  }

  function show(card, frame) {
    card.store.textContent = frame.store + ' store';
    OUTCOMES.forEach(function (outcome, i) {
      card.rates[outcome].textContent = number.format(frame.rate[i]);
      card.totals[outcome].textContent = whole.format(frame.totals[outcome]);
    });
    ['insurance', 'fail-open', 'fail-closed'].forEach(function (mode) {
      card.totals[mode].textContent = whole.format(frame.degraded[mode]);
    });
    if (frame.adaptive) {
      card.adaptiveNow.limit.textContent = whole.format(frame.adaptive.limit);
      card.adaptiveNow.inFlight.textContent = whole.format(frame.adaptive.inFlight);
      card.adaptiveNow.queued.textContent = whole.format(frame.adaptive.queued);
      card.adaptiveNow.shed.textContent = whole.format(frame.adaptive.shed);
    }
    card.nowFacts.hidden = !frame.concurrency;
    if (frame.concurrency) {
      card.now.inFlight.textContent = whole.format(frame.concurrency.inFlight);
      card.now.queued.textContent = whole.format(frame.concurrency.queued);
    }
    var health = frame.storeHealth;
    card.storeFacts.hidden = !health;
    card.health.hidden = !health;
    if (health) {
      card.health.textContent = health.up ? 'store up' : 'store down';
      card.health.className = 'badge ' + (health.up ? 'up' : 'down');
      var ms = function (v) { return v === null ? '-' : number.format(v); };
      card.storeValues.latency.textContent = ms(health.p50) + ' / ' + ms(health.p90) + ' / ' + ms(health.p99) + ' ms';
      card.storeValues.errors.textContent = whole.format(health.timeouts) + ' / ' + whole.format(health.errors);
      card.storeValues.cache.textContent = whole.format(health.blockCacheHits) + ' / ' + whole.format(health.leaseCalls);
    }
    card.dryRun.hidden = !frame.dryRun;
    card.dryRun.textContent = 'dry run: ' + whole.format(frame.totals.dryRunLimited) + ' refusals and ' +
      whole.format(frame.totals.dryRunDelayed) + ' delays let through (counted in limited and delayed)';
    var rows = document.createDocumentFragment();
    frame.hotKeys.forEach(function (hot) {
      var row = el('tr');
      var key = el('td', 'key', hot.key);
      key.title = hot.key;
      row.appendChild(key);
      row.appendChild(el('td', '', whole.format(hot.requests)));
      row.appendChild(el('td', '', whole.format(hot.admitted + hot.delayed)));
      row.appendChild(el('td', '', whole.format(hot.limited)));
      var share = hot.requests - hot.error > 0 ? hot.limited / (hot.requests - hot.error) : 0;
      var cell = el('td');
      var bar = el('span', 'bar');
      bar.style.width = Math.round(share * 60) + 'px';
      cell.appendChild(bar);
      cell.appendChild(document.createTextNode(' ' + Math.round(share * 100) + '%'));
      row.appendChild(cell);
      row.appendChild(el('td', '', whole.format(hot.error)));
      rows.appendChild(row);
    });
    card.hotKeys.replaceChildren(rows);
  }

  var here = location.pathname;
  var events = (here.endsWith('/') ? '' : here.slice(here.lastIndexOf('/') + 1) + '/') + 'events';
  var source = new EventSource(events);
  source.addEventListener('history', function (event) {
    var history = JSON.parse(event.data);
    capacity = history.capacity;
    intervalMs = history.intervalMs;
    history.limiters.forEach(function (limiter) {
      var card = cardOf(limiter.name);
      OUTCOMES.forEach(function (outcome) { card.series[outcome] = limiter[outcome]; });
      if (limiter.adaptive) card.adaptive = { limit: limiter.adaptive.limit, inFlight: limiter.adaptive.inFlight };
      draw(card);
      drawAdaptive(card);
    });
  });
  source.addEventListener('tick', function (event) {
    var tick = JSON.parse(event.data);
    tick.limiters.forEach(function (frame) {
      var card = cardOf(frame.name);
      OUTCOMES.forEach(function (outcome, i) {
        var values = card.series[outcome];
        values.push(frame.rate[i]);
        if (values.length > capacity) values.shift();
      });
      if (frame.adaptive) {
        card.adaptive.limit.push(frame.adaptive.limit);
        card.adaptive.inFlight.push(frame.adaptive.inFlight);
        if (card.adaptive.limit.length > capacity) {
          card.adaptive.limit.shift();
          card.adaptive.inFlight.shift();
        }
      }
      draw(card);
      drawAdaptive(card);
      show(card, frame);
    });
    status.className = 'status';
    status.textContent = 'live, updated ' + new Date(tick.t).toLocaleTimeString();
  });
  source.addEventListener('error', function () {
    status.className = 'status offline';
    status.textContent = 'disconnected, retrying...';
  });
})();
`;
