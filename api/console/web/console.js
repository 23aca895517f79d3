// Fleethub dispatch console. Signs in by exchanging the key it is given,
// once, for a short-lived browser token (POST /v1/tokens) and forgets the
// key: the token, kept in this tab's sessionStorage, goes in the
// Authorization header of the API calls and as an offered subprotocol of
// the streaming websocket. When the token expires or is refused the
// console asks for a key again. Events and positions come from the
// organization's feed (/api/v1/streaming/feed): the newest on open, then
// a long poll after the feed's cursor. The console starts no stream of
// its own.
(function () {
  'use strict';

  var KEY = 'fleethub.console.key';       // where an earlier console kept the key: removed
  var TOKEN = 'fleethub.console.token';   // {token, token_id, expires_at, scopes}
  var ENDED = 'fleethub.console.ended';   // why the last session ended, shown at the next sign-in
  var TOKEN_TTL = 8 * 3600;               // seconds a sign-in lasts
  // scopes asked for; one the key may not grant is left out
  var SCOPES = ['feed:read', 'streams:read', 'console:read', 'alerts:acknowledge', 'webhooks:replay'];
  var STREAMS = 'fleethub.console.streams';
  var FEED_MAX = 1000;      // events kept in memory
  var FEED_SHOWN = 200;     // events drawn after filtering
  var REPLAY = 100;         // entries read from the feed (last=100) or a followed stream's log on open
  var FEED_WAIT = 25;       // seconds a long poll of the feed waits for an entry
  var ALERT_WINDOW = 120e3; // a high or critical event colours its vehicle for 2 min
  var ROUTE_READS = 40;     // trip routes read per 2 s round to place vehicles

  var $ = function (id) { return document.getElementById(id); };
  var S = {
    token: '', streams: [], orgStreams: [], positions: {}, ws: null, wsOpen: false, backoff: 500, timer: 0,
    feed: [], seen: {}, vehicles: {}, trips: {}, readAt: {}, alerts: {}, selected: '', map: null,
    layers: {}, route: null, routeEvents: null, focus: null, renderQueued: false, polling: 0, selectedEvent: '',
    stats: { messages: 0, duplicates: 0, gaps: 0, connects: 0, historyLost: 0 },
    readers: [], seq: 0
  };

  // ---- key ----

  function keyFromFragment() {
    var h = location.hash.replace(/^#/, '');
    if (!h) return '';
    var k = new URLSearchParams(h).get('key') || '';
    history.replaceState(null, '', location.pathname);
    return k.trim();
  }

  function api(method, path, body, signal) {
    var opt = { method: method, headers: { 'Authorization': 'Bearer ' + S.token }, cache: 'no-store', signal: signal };
    return request(path, opt, body);
  }

  // request sends one API call; a token the server no longer takes ends
  // the session.
  function request(path, opt, body) {
    if (body !== undefined) {
      opt.headers['Content-Type'] = 'application/json';
      opt.body = JSON.stringify(body);
    }
    return fetch(path, opt).then(function (r) {
      return r.text().then(function (t) {
        var data = null;
        try { data = t ? JSON.parse(t) : null; } catch (e) { data = null; }
        if (!r.ok) {
          var e = data && data.error;
          var err = new Error((e && (e.message || e.code || e)) || r.status + ' ' + r.statusText);
          err.status = r.status;
          err.code = e && e.code;
          err.details = (e && e.details) || {};
          if (S.token && opt.headers.Authorization && /^(token_expired|token_revoked|invalid_token|api_key_revoked)$/.test(err.code)) ended(err.code);
          throw err;
        }
        return data;
      });
    });
  }

  // signIn exchanges the key for a token and forgets the key: it is in
  // no storage, no URL and no variable once this returns. A key that may
  // not acknowledge alerts gets a token without that scope.
  function signIn(k, scopes) {
    $('signin-error').textContent = '';
    scopes = scopes || SCOPES;
    var opt = { method: 'POST', headers: { 'X-API-Key': k }, cache: 'no-store' };
    return request('/v1/tokens', opt, { scopes: scopes, expires_in_seconds: TOKEN_TTL }).then(function (t) {
      sessionStorage.setItem(TOKEN, JSON.stringify({ token: t.token, token_id: t.token_id, expires_at: t.expires_at, scopes: t.scopes }));
      sessionStorage.removeItem(ENDED);
      signedIn(t);
    }, function (err) {
      var scope = err.details && err.details.scope;
      if (err.status === 403 && scope && scope !== 'feed:read' && scopes.indexOf(scope) >= 0) {
        return signIn(k, scopes.filter(function (s) { return s !== scope; }));
      }
      $('signin-error').textContent = err.status === 401 ? 'This key was not accepted.' :
        err.status === 403 ? 'This key cannot sign in to the console: ' + err.message : 'Sign-in failed: ' + err.message;
      $('key').focus();
      return null;
    });
  }

  // signedIn starts the console with a token, until its expiry.
  function signedIn(t) {
    S.token = t.token;
    S.scopes = t.scopes || [];
    var exp = Date.parse(t.expires_at);
    $('who').textContent = 'signed in until ' + fmtTime(t.expires_at);
    $('signin').hidden = true;
    $('app').hidden = false;
    $('signout').hidden = false;
    setTimeout(function () { ended('token_expired'); }, Math.max(0, Math.min(exp - Date.now(), 2147483647)));
    start();
  }

  // storedToken is the tab's token while it has not expired.
  function storedToken() {
    var t = null;
    try { t = JSON.parse(sessionStorage.getItem(TOKEN) || 'null'); } catch (e) { t = null; }
    if (!t || !t.token || !(Date.parse(t.expires_at) > Date.now() + 5000)) { sessionStorage.removeItem(TOKEN); return null; }
    return t;
  }

  // ended ends the session whose token expired or was refused: the page
  // starts again and asks for a key.
  var ending = false;
  function ended(code) {
    if (ending) return;
    ending = true;
    var why = { token_expired: 'Your sign-in expired.', token_revoked: 'Your sign-in was revoked.', api_key_revoked: 'The key you signed in with was revoked.' }[code] ||
      'Your sign-in is no longer accepted.';
    sessionStorage.removeItem(TOKEN);
    sessionStorage.setItem(ENDED, why + ' Sign in again with a key.');
    location.reload();
  }

  function signOut() {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(STREAMS);
    location.reload();
  }

  // ---- start ----

  function start() {
    setConn('off', 'connecting…');
    initMap();
    try { S.streams = JSON.parse(sessionStorage.getItem(STREAMS) || '[]'); } catch (e) { S.streams = []; }
    // streams an earlier version of the console started for itself are
    // not followed any more: the server ends them once idle
    S.streams = S.streams.filter(function (s) { return !s.own; });
    saveStreams();
    // events (the filters are the feed's parameters) and positions
    // (gps_enhanced telemetry) come from the organization's feed
    S.readers = [
      reader('events', eventParams, function (e) { S.stats.messages++; addEvent('feed', ++S.seq, e.message); }, dropFeedEvents),
      reader('positions', function () { return 'types=telemetry&data_types=gps_enhanced'; }, function (e) { S.stats.messages++; onTelemetry(e.message); })
    ];
    S.readers.forEach(openReader);
    renderStreams();
    refreshStreams();
    connect();
    pollVehicles();
    pollIncidents();
    refreshAlerts();
    setInterval(pollVehicles, 2000);
    setInterval(pollIncidents, 5000);
    setInterval(refreshStreams, 3000);
    setInterval(refreshAlerts, 5000);
    setInterval(function () { Object.keys(S.vehicles).forEach(drawVehicle); }, 5000); // moving turns idle, alerts fade
  }

  function saveStreams() { sessionStorage.setItem(STREAMS, JSON.stringify(S.streams)); }

  function setConn(kind, text) {
    var el = $('conn');
    el.className = 'conn conn-' + kind;
    el.textContent = text;
  }

  // ---- the organization's feed ----

  // eventParams are the event filters as the feed's parameters.
  function eventParams() {
    var q = 'types=events';
    var c = $('f-category').value, s = $('f-severity').value, v = $('f-vehicle').value.trim();
    if (c) q += '&category=' + encodeURIComponent(c);
    if (s) q += '&severity=' + encodeURIComponent(s);
    if (v) q += '&vehicle_id=' + encodeURIComponent(v);
    return q;
  }

  // A reader pulls the newest REPLAY entries its parameters take
  // (last=), then long-polls after the feed's cursor; after a failure it
  // resumes from that cursor (no gap, no duplicate). Opening it again
  // (new parameters) abandons the poll under way.
  function reader(name, params, onEntry, reset) {
    return { name: name, params: params, onEntry: onEntry, reset: reset, cursor: '', ctl: null, gen: 0, ok: false, backoff: 500, timer: 0 };
  }

  function openReader(r) {
    r.gen++;
    clearTimeout(r.timer);
    if (r.ctl) r.ctl.abort();
    r.fresh = !!r.cursor;
    r.cursor = '';
    r.opened = r.params();
    pull(r, r.gen);
  }

  function pull(r, gen) {
    var ctl = new AbortController();
    r.ctl = ctl;
    // after a failure the first pull does not wait: its answer tells the
    // connection is back
    var q = r.params() + (r.cursor ? '&after=' + encodeURIComponent(r.cursor) + '&limit=1000&wait=' + (r.ok ? FEED_WAIT : 0) : '&last=' + REPLAY);
    api('GET', '/api/v1/streaming/feed?' + q, undefined, ctl.signal).then(function (p) {
      if (gen !== r.gen) return;
      if (!r.ok) S.stats.connects++;
      r.ok = true;
      r.backoff = 500;
      feedState();
      if (r.fresh && r.reset) r.reset();
      r.fresh = false;
      (p.entries || []).forEach(r.onEntry);
      r.cursor = p.next_cursor || r.cursor;
      pull(r, gen);
    }, function (err) {
      if (gen !== r.gen) return;
      r.ok = false;
      if (err.code === 'cursor_expired' && err.details.first_available) {
        // retention passed the cursor: go on from the oldest retained, counted as a gap
        S.stats.gaps++;
        r.cursor = err.details.first_available;
      }
      var wait = r.backoff;
      r.backoff = Math.min(r.backoff * 2, 10000);
      feedState(err.status === 401 || err.status === 403 ? err.message : 'disconnected: reconnecting in ' + Math.ceil(wait / 1000) + ' s');
      r.timer = setTimeout(function () { if (gen === r.gen) pull(r, gen); }, wait);
    });
  }

  // feedState shows live once every reader's last pull answered.
  function feedState(problem) {
    if (problem) { setConn('down', problem); return; }
    if (S.readers.every(function (r) { return r.ok; })) setConn('live', 'live');
  }

  // dropFeedEvents forgets the events read from the feed, before it is
  // read again with other filters (in the same round as the new ones, so
  // no redraw shows the list empty in between).
  function dropFeedEvents() {
    S.feed = S.feed.filter(function (e) { if (e.stream === 'feed') { delete S.seen[e.id]; return false; } return true; });
    queueRender();
  }

  // refilter reads the feed again with the filters as parameters: the
  // newest REPLAY events they take, then what comes.
  var refilterTimer = 0;
  function refilter() {
    queueRender();
    clearTimeout(refilterTimer);
    refilterTimer = setTimeout(function () {
      var r = S.readers[0];
      if (!r || r.params() === r.opened) return;
      openReader(r);
    }, 300);
  }

  // ---- websocket: streams the dispatcher follows ----

  // startOffsets finds where each stream without a kept position starts:
  // the last REPLAY messages of its log. A stream that no longer exists is
  // left.
  function startOffsets() {
    return Promise.all(S.streams.map(function (s) {
      if (S.positions[s.id]) return null;
      return api('GET', '/api/v1/streaming/' + s.type + '/status/' + encodeURIComponent(s.id)).then(function (st) {
        var last = (st.lag && st.lag.last_offset) || 0;
        S.positions[s.id] = { offset: Math.max(0, last - REPLAY), epoch: '' };
      }, function (err) {
        if (err.status === 404) s.gone = true;
        else S.positions[s.id] = { offset: 0, epoch: '' };
      });
    })).then(function () {
      var gone = S.streams.filter(function (s) { return s.gone; });
      if (!gone.length) return null;
      S.streams = S.streams.filter(function (s) { return !s.gone; });
      saveStreams();
      renderStreams();
      return null;
    });
  }

  function connect() {
    clearTimeout(S.timer);
    if (!S.streams.length) return;
    startOffsets().then(function () {
      if (!S.streams.length) return;
      var first = S.streams[0];
      var p = S.positions[first.id];
      var q = 'stream_id=' + encodeURIComponent(first.id) + '&last_offset=' + p.offset;
      if (p.epoch) q += '&epoch=' + encodeURIComponent(p.epoch);
      // Browsers cannot set headers on a websocket: the token travels as an
      // offered subprotocol, "fhk.<token>", never in the URL; the server
      // selects "fleethub.v1" and does not echo it (docs/websocket.md).
      var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/api/v1/streaming/ws?' + q,
        ['fleethub.v1', 'fhk.' + S.token]);
      S.ws = ws;
      ws.onopen = function () {
        S.wsOpen = true;
        S.backoff = 500;
        S.streams.slice(1).forEach(function (s) { subscribe(s); });
      };
      ws.onmessage = function (m) { onFrame(m.data); };
      ws.onclose = function (ev) {
        if (S.ws !== ws) return;
        S.wsOpen = false;
        S.ws = null;
        if (ev.code === 4001) { $('streams-error').textContent = 'the followed streams were stopped'; return; }
        if (ev.code === 4401) { ended(ev.reason === 'token revoked' ? 'token_revoked' : 'token_expired'); return; }
        var wait = S.backoff;
        S.backoff = Math.min(S.backoff * 2, 10000);
        S.timer = setTimeout(connect, wait);
      };
    });
  }

  function subscribe(s) {
    if (!S.ws || !S.wsOpen) return;
    var p = S.positions[s.id] || { offset: 0, epoch: '' };
    var f = { type: 'subscribe', stream_id: s.id, last_offset: p.offset };
    if (p.epoch) f.epoch = p.epoch;
    S.ws.send(JSON.stringify(f));
  }

  function onFrame(data) {
    var f;
    try { f = JSON.parse(data); } catch (e) { return; }
    if (Array.isArray(f)) { f.forEach(onMessage); return; }
    if (!f.type) { onMessage(f); return; }
    var p;
    switch (f.type) {
    case 'subscribed':
      p = S.positions[f.stream_id] || { offset: 0, epoch: '' };
      if (!p.epoch) p.epoch = f.epoch;
      S.positions[f.stream_id] = p;
      break;
    case 'error':
      if (f.code === 'history_lost') {
        S.stats.historyLost++;
        S.positions[f.stream_id] = { offset: (f.first_available || 1) - 1, epoch: f.epoch };
        dropStreamEvents(f.stream_id);
      } else if (f.code === 'offsets_expired' && S.positions[f.stream_id]) {
        S.stats.gaps++;
        S.positions[f.stream_id].offset = (f.first_available || 1) - 1;
      }
      if (f.code !== 'offsets_expired') $('streams-error').textContent = f.stream_id + ': ' + f.code + (f.message ? ' (' + f.message + ')' : '');
      break;
    }
  }

  // onMessage takes one {stream_id, offset, message}: a message at or below
  // the stream's last processed offset of the same epoch is a duplicate.
  function onMessage(w) {
    var p = S.positions[w.stream_id];
    if (!p) { p = S.positions[w.stream_id] = { offset: 0, epoch: '' }; }
    if (w.offset <= p.offset) { S.stats.duplicates++; return; }
    if (p.offset && w.offset > p.offset + 1) S.stats.gaps++;
    p.offset = w.offset;
    S.stats.messages++;
    var m = w.message || {};
    if (m.event_type) addEvent(w.stream_id, w.offset, m);
    else if (m.data_type) onTelemetry(m);
  }

  // ---- feed ----

  function addEvent(stream, offset, ev) {
    var id = ev.event_id || stream + ':' + offset;
    if (S.seen[id]) { S.stats.duplicates++; return; }
    S.seen[id] = true;
    S.feed.unshift({ stream: stream, offset: offset, id: id, ev: ev });
    if (S.feed.length > FEED_MAX) delete S.seen[S.feed.pop().id];
    var v = ev.source && ev.source.vehicle_id;
    if (v) {
      if (ev.severity === 'high' || ev.severity === 'critical' || ev.event_type === 'emergency_alert') {
        // from the event's time: one read from the feed's history may be old already
        var at = Math.min(Date.parse(ev.timestamp) || Date.now(), Date.now());
        vehicle(v).alertAt = Math.max(vehicle(v).alertAt || 0, at);
      }
      if (ev.location && typeof ev.location.latitude === 'number') {
        var veh = vehicle(v);
        // a place to start from, not a move: the event may be old
        if (!veh.pos) { veh.pos = [ev.location.latitude, ev.location.longitude]; veh.guessed = true; }
      }
      drawVehicle(v);
    }
    if (ev.event_type === 'emergency_alert' && ev.event_data && ev.event_data.alert_id) {
      var a = S.alerts[ev.event_data.alert_id] || (S.alerts[ev.event_data.alert_id] = { id: ev.event_data.alert_id, recipients: {}, view: null });
      if (ev.event_data.recipient_id) a.recipients[ev.event_data.recipient_id] = true;
      if (!a.view) a.view = { title: ev.event_data.title, severity: ev.severity, status: 'active' };
      fetchAlert(a.id);
    }
    if ((ev.category === 'emergency_events' || ev.category === 'maintenance_events') && /^incident_/.test(ev.event_type)) pollIncidents();
    if (ev.category === 'trip_lifecycle') pollVehicles();
    queueRender();
  }

  function dropStreamEvents(stream) {
    S.feed = S.feed.filter(function (e) {
      if (e.stream === stream) { delete S.seen[e.id]; return false; }
      return true;
    });
    queueRender();
  }

  // queueRender draws the feed and alerts on the next frame, at most four
  // times a second however fast events come.
  var lastRender = 0;
  function queueRender() {
    if (S.renderQueued) return;
    S.renderQueued = true;
    setTimeout(function () {
      requestAnimationFrame(function () { S.renderQueued = false; lastRender = Date.now(); renderFeed(); renderAlerts(); });
    }, Math.max(0, 250 - (Date.now() - lastRender)));
  }

  function matches(e) {
    var c = $('f-category').value, s = $('f-severity').value, v = $('f-vehicle').value.trim().toLowerCase();
    var ev = e.ev;
    if (c && ev.category !== c) return false;
    if (s && ev.severity !== s) return false;
    if (v && ((ev.source && ev.source.vehicle_id) || '').toLowerCase().indexOf(v) < 0) return false;
    return true;
  }

  function renderFeed() {
    var ol = $('feed');
    // a live redraw must not take the keyboard focus away from an entry
    var a = document.activeElement;
    var had = a && a.parentNode && a.parentNode.parentNode === ol ? a.dataset.key : '';
    var frag = document.createDocumentFragment();
    var n = 0;
    for (var i = 0; i < S.feed.length && n < FEED_SHOWN; i++) {
      var e = S.feed[i];
      if (!matches(e)) continue;
      n++;
      frag.appendChild(feedItem(e));
    }
    ol.replaceChildren(frag);
    $('feed-count').textContent = n + ' of ' + S.feed.length;
    if (had) {
      var again = feedButton(had);
      if (again) again.focus({ preventScroll: true });
    }
  }

  // feedButton finds an entry by its key: the event id (stable when the
  // feed is read again), else stream:offset.
  function feedButton(key) {
    return $('feed').querySelector('button[data-key="' + CSS.escape(key) + '"]');
  }

  function feedItem(e) {
    var ev = e.ev;
    var li = document.createElement('li');
    var b = document.createElement('button');
    b.type = 'button';
    b.className = 'sev-' + (ev.severity || 'low');
    b.dataset.offset = e.offset;
    b.dataset.stream = e.stream;
    b.dataset.key = e.id;
    b.dataset.eventId = ev.event_id || '';
    b.append(span('time', fmtTime(ev.timestamp)), span('type', ev.event_type || 'event'),
      span('meta', [ev.category, ev.severity, ev.source && ev.source.vehicle_id].filter(Boolean).join(' · ')));
    if (S.selectedEvent === e.id) b.setAttribute('aria-current', 'true');
    b.addEventListener('click', function () { focusEvent(ev, e.id); });
    li.appendChild(b);
    return li;
  }

  function span(cls, text) {
    var s = document.createElement('span');
    s.className = cls;
    s.textContent = text;
    return s;
  }

  function fmtTime(t) {
    var d = new Date(t);
    return isNaN(d) ? '' : d.toLocaleTimeString([], { hour12: false });
  }

  // focusEvent centres the map on an event; id (its entry's key) marks
  // its feed entry as the current one.
  function focusEvent(ev, id) {
    var prev = S.selectedEvent && feedButton(S.selectedEvent);
    if (prev) prev.removeAttribute('aria-current');
    S.selectedEvent = id || '';
    var cur = id && feedButton(id);
    if (cur) cur.setAttribute('aria-current', 'true');
    var v = ev.source && ev.source.vehicle_id;
    var ll = ev.location && typeof ev.location.latitude === 'number' ? [ev.location.latitude, ev.location.longitude] :
      v && S.vehicles[v] && S.vehicles[v].pos;
    $('selected').textContent = (ev.event_type || 'event') + (v ? ' of ' + v : '') + (ll ? '' : ' (no location)');
    if (!ll) return;
    if (S.focus) S.focus.remove();
    S.focus = L.circleMarker(ll, { radius: 14, color: '#1a5fd0', weight: 3, fill: false, className: 'focus-ring' }).addTo(S.map);
    S.map.setView(ll, Math.max(S.map.getZoom(), 14), { animate: false });
  }

  // ---- map ----

  function initMap() {
    if (S.map) return;
    S.map = L.map('map', { center: [20, 0], zoom: 2, worldCopyJump: true, keyboard: true });
    var Grid = L.GridLayer.extend({
      createTile: function () {
        var t = document.createElement('div');
        t.className = 'grid-tile';
        return t;
      }
    });
    S.grid = new Grid({ attribution: 'grid: no base map loaded' }).addTo(S.map);
    L.control.scale({ metric: true, imperial: false }).addTo(S.map);
    S.map.attributionControl.setPrefix('<a href="/console/leaflet/LICENSE">Leaflet</a>');
    S.routeEvents = L.layerGroup().addTo(S.map);
    initBaseMap();
  }

  // initBaseMap draws the server's own tiles (--tiles) under the vehicles
  // when it has an archive: vector tiles are decoded and painted on a
  // canvas, raster tiles drawn as they are. Without one the grid stays.
  function initBaseMap() {
    api('GET', '/v1/api/tiles/buildings/metadata').then(function (md) {
      var h = md && md.header;
      if (!h) return;
      var Base = L.GridLayer.extend({
        createTile: function (c, done) {
          var cv = document.createElement('canvas');
          cv.width = cv.height = 256;
          cv.className = 'base-tile';
          drawTile(cv, c, h.tileType).then(function () { done(null, cv); }, function () { done(null, cv); });
          return cv;
        }
      });
      var attr = '';
      try { attr = (JSON.parse(md.metadata || '{}').attribution || '').replace(/<[^>]*>/g, ''); } catch (e) { attr = ''; }
      S.grid.remove();
      new Base({ minNativeZoom: h.minZoom, maxNativeZoom: h.maxZoom, bounds: [[h.minLat, h.minLon], [h.maxLat, h.maxLon]],
        attribution: attr || 'tiles: ' + (md.file || 'server archive') }).addTo(S.map);
      if (!Object.keys(S.layers).length) S.map.setView([h.centerLat, h.centerLon], Math.max(h.centerZoom || 0, h.minZoom || 0), { animate: false });
    }, function () {});
  }

  function drawTile(cv, c, type) {
    var path = '/v1/api/tiles/buildings/' + c.z + '/' + c.x + '/' + c.y + '.mvt';
    return fetch(path, { headers: { 'Authorization': 'Bearer ' + S.token } }).then(function (r) {
      if (!r.ok) return null;
      if (type === 'mvt') return r.arrayBuffer().then(function (b) { paintVector(cv, decodeTile(new Uint8Array(b))); });
      return r.blob().then(createImageBitmap).then(function (img) { cv.getContext('2d').drawImage(img, 0, 0, 256, 256); cv.dataset.features = 1; });
    });
  }

  // decodeTile reads a Mapbox vector tile: its layers, each with a name, an
  // extent and features of a type and a packed geometry.
  function decodeTile(buf) {
    var pos = 0;
    function varint() {
      var v = 0, m = 1, b;
      do { b = buf[pos++]; v += (b & 0x7f) * m; m *= 128; } while (b >= 0x80);
      return v;
    }
    function skip(wire) {
      if (wire === 0) varint();
      else if (wire === 1) pos += 8;
      else if (wire === 2) { var n = varint(); pos += n; }
      else if (wire === 5) pos += 4;
      else throw new Error('bad wire type');
    }
    function fields(end, fn) {
      while (pos < end) {
        var key = varint(), tag = Math.floor(key / 8), wire = key & 7;
        if (!fn(tag, wire)) skip(wire);
      }
    }
    var layers = [];
    fields(buf.length, function (tag, wire) {
      if (tag !== 3 || wire !== 2) return false;
      var end = varint() + pos, layer = { name: '', extent: 4096, features: [] };
      fields(end, function (t, w) {
        if (t === 1 && w === 2) { var n = varint(); layer.name = new TextDecoder().decode(buf.subarray(pos, pos + n)); pos += n; return true; }
        if (t === 5 && w === 0) { layer.extent = varint(); return true; }
        if (t !== 2 || w !== 2) return false;
        var fend = varint() + pos, f = { type: 0, geom: [] };
        fields(fend, function (ft, fw) {
          if (ft === 3 && fw === 0) { f.type = varint(); return true; }
          if (ft !== 4 || fw !== 2) return false;
          var gend = varint() + pos;
          while (pos < gend) f.geom.push(varint());
          return true;
        });
        layer.features.push(f);
        return true;
      });
      layers.push(layer);
      return true;
    });
    return layers;
  }

  // Layers are painted in this order whatever their order in the tile;
  // layers of other names are left out.
  var STYLE = [
    ['earth', { fill: '#f3f1ec' }], ['landcover', { fill: '#e4ecd9' }], ['landuse', { fill: '#e4ecd9' }],
    ['natural', { fill: '#dbe8cc' }], ['park', { fill: '#dbe8cc' }], ['water', { fill: '#b8d6e6' }], ['ocean', { fill: '#b8d6e6' }],
    ['physical_line', { stroke: '#b8d6e6', width: 1 }], ['boundaries', { stroke: '#b9a9c9', width: 1 }],
    ['roads', { stroke: '#ffffff', width: 2, casing: '#cfcac2' }], ['transportation', { stroke: '#ffffff', width: 2, casing: '#cfcac2' }],
    ['buildings', { fill: '#ddd6cf', stroke: '#c7bcb1' }], ['building', { fill: '#ddd6cf', stroke: '#c7bcb1' }]
  ];

  function paintVector(cv, layers) {
    var ctx = cv.getContext('2d'), n = 0;
    ctx.fillStyle = '#f3f1ec';
    ctx.fillRect(0, 0, 256, 256);
    var byName = {};
    layers.forEach(function (l) { byName[l.name] = l; });
    STYLE.forEach(function (ls) {
      var l = byName[ls[0]], st = ls[1];
      if (!l) return;
      var k = 256 / l.extent;
      l.features.forEach(function (f) {
        if (f.type !== 2 && f.type !== 3) return;
        ctx.beginPath();
        var g = f.geom, i = 0, x = 0, y = 0;
        while (i < g.length) {
          var cmd = g[i] & 7, count = g[i] >> 3;
          i++;
          if (cmd === 7) { ctx.closePath(); continue; }
          for (var j = 0; j < count; j++) {
            var dx = g[i++], dy = g[i++];
            x += (dx >>> 1) ^ -(dx & 1);
            y += (dy >>> 1) ^ -(dy & 1);
            if (cmd === 1) ctx.moveTo(x * k, y * k); else ctx.lineTo(x * k, y * k);
          }
        }
        n++;
        if (f.type === 3 && st.fill) { ctx.fillStyle = st.fill; ctx.fill('evenodd'); }
        if (st.casing) { ctx.strokeStyle = st.casing; ctx.lineWidth = (st.width || 1) + 1.5; ctx.stroke(); }
        if (st.stroke) { ctx.strokeStyle = st.stroke; ctx.lineWidth = st.width || 1; ctx.stroke(); }
      });
    });
    cv.dataset.features = n;
  }

  function vehicle(id) {
    return S.vehicles[id] || (S.vehicles[id] = { id: id, pos: null, prev: null, trip: null, status: '', alertAt: 0, marker: null, movedAt: 0 });
  }

  function vehicleState(v) {
    if (v.alertAt && Date.now() - v.alertAt < ALERT_WINDOW) return 'alert';
    if (v.status === 'paused') return 'paused';
    if (v.movedAt && Date.now() - v.movedAt < 10000) return 'moving';
    return 'idle';
  }

  var COLORS = { moving: '#1e8e3e', idle: '#8a6d00', paused: '#5b6474', alert: '#c5221f' };

  function drawVehicle(id) {
    var v = S.vehicles[id];
    if (!v || !v.pos || !S.map) return;
    var st = vehicleState(v);
    var opts = { radius: 7, color: '#fff', weight: 2, fillColor: COLORS[st], fillOpacity: 1, className: 'vehicle vehicle-' + st };
    if (!v.marker) {
      v.marker = L.circleMarker(v.pos, opts).addTo(S.map);
      v.marker.bindTooltip(id, { direction: 'top' });
      v.marker.on('click', function () { select(id); });
      if (v.marker.getElement()) v.marker.getElement().setAttribute('data-vehicle', id);
      if (Object.keys(S.layers).length === 0) S.map.setView(v.pos, 13, { animate: false });
      S.layers[id] = v.marker;
    } else {
      v.marker.setLatLng(v.pos);
      v.marker.setStyle({ fillColor: COLORS[st] });
      var el = v.marker.getElement();
      if (el) el.setAttribute('class', 'leaflet-interactive vehicle vehicle-' + st);
    }
    v.state = st;
    renderVehiclesSoon();
  }

  var vehTimer = 0;
  function renderVehiclesSoon() {
    if (vehTimer) return;
    vehTimer = setTimeout(function () { vehTimer = 0; renderVehicles(); }, 250);
  }

  // renderVehicles redraws the list when a vehicle came, went or changed
  // state (positions are on the map only).
  var vehSig = '';
  function renderVehicles() {
    var ids = Object.keys(S.vehicles).filter(function (id) { return S.vehicles[id].marker; }).sort();
    var sig = S.selected + '|' + ids.map(function (id) { return id + ':' + S.vehicles[id].state; }).join(',');
    if (sig === vehSig) return;
    vehSig = sig;
    var frag = document.createDocumentFragment();
    ids.forEach(function (id) {
      var v = S.vehicles[id];
      var li = document.createElement('li');
      var b = document.createElement('button');
      b.type = 'button';
      b.dataset.vehicle = id;
      b.setAttribute('aria-pressed', String(S.selected === id));
      var dot = span('dot s-' + v.state, '');
      b.append(dot, document.createTextNode(id + ' — ' + v.state));
      b.addEventListener('click', function () { select(id); });
      li.appendChild(b);
      frag.appendChild(li);
    });
    $('vehicles').replaceChildren(frag);
    $('vehicle-count').textContent = ids.length;
  }

  // select shows a vehicle's trip route and the safety events of that trip.
  function select(id) {
    S.selected = id;
    var v = S.vehicles[id];
    renderVehicles();
    if (!v) return;
    if (v.pos) S.map.setView(v.pos, Math.max(S.map.getZoom(), 14), { animate: false });
    $('selected').textContent = id + (v.trip ? ' on trip ' + v.trip : '') + ': ' + v.state;
    if (S.route) { S.route.remove(); S.route = null; }
    S.routeEvents.clearLayers();
    if (!v.trip) return;
    api('GET', '/v1/trips/' + encodeURIComponent(v.trip) + '/route?include_waypoints=false&simplify_geometry=false').then(function (r) {
      var cs = (r.route_geometry && r.route_geometry.coordinates) || [];
      S.route = L.polyline(cs.map(function (c) { return [c[1], c[0]]; }), { color: '#1a5fd0', weight: 4, opacity: .7, className: 'trip-route' }).addTo(S.map);
      if (cs.length > 1) S.map.fitBounds(S.route.getBounds(), { padding: [40, 40], maxZoom: 17, animate: false });
      var drawn = {};
      var mark = function (lat, lon, type) {
        var k = type + '@' + lat.toFixed(5) + ',' + lon.toFixed(5);
        if (drawn[k]) return;
        drawn[k] = true;
        L.circleMarker([lat, lon], { radius: 5, color: '#c25400', className: 'route-event' }).bindTooltip(type).addTo(S.routeEvents);
      };
      S.feed.forEach(function (e) {
        var ev = e.ev;
        if (ev.category !== 'safety_events' || !ev.source || ev.source.trip_id !== v.trip || !ev.location) return;
        mark(ev.location.latitude, ev.location.longitude, ev.event_type);
      });
      // the trip's stored safety events, once the trip is long enough to be scored
      return api('GET', '/v1/analytics/safety-score/' + encodeURIComponent(v.trip)).then(function (sc) {
        ((sc && sc.risk_factors) || []).forEach(function (rf) {
          (rf.locations || []).forEach(function (l) { mark(l.latitude, l.longitude, rf.factor_type); });
        });
      });
    }).then(null, function () {});
  }

  function onTelemetry(m) {
    var pos = m.data && m.data.position;
    if (!m.vehicle_id || !pos || typeof pos.latitude !== 'number') return;
    moveVehicle(m.vehicle_id, [pos.latitude, pos.longitude]);
  }

  function moveVehicle(id, ll) {
    var v = vehicle(id);
    if (v.pos && !v.guessed && (v.pos[0] !== ll[0] || v.pos[1] !== ll[1])) v.movedAt = Date.now();
    v.pos = ll;
    v.guessed = false;
    drawVehicle(id);
  }

  // pollVehicles reads the active and paused trips, and the last point of
  // each trip that changed since the last look (the trip's route).
  function pollVehicles() {
    if (S.polling) return;
    S.polling = 1;
    var lists = ['active', 'paused'].map(function (st) { return listTrips(st, '', [], 0); });
    Promise.all(lists).then(function (ls) {
      var trips = ls[0].concat(ls[1]);
      var live = {};
      var todo = [];
      trips.forEach(function (t) {
        live[t.vehicle_id] = true;
        var v = vehicle(t.vehicle_id);
        v.trip = t.trip_id;
        v.status = t.status;
        if (S.trips[t.trip_id] !== t.updated_at) todo.push(t);
        else drawVehicle(t.vehicle_id);
      });
      Object.keys(S.vehicles).forEach(function (id) {
        var v = S.vehicles[id];
        if (!live[id] && v.trip && v.marker) { v.marker.remove(); v.marker = null; delete S.layers[id]; v.trip = null; renderVehiclesSoon(); }
      });
      // The listing has no positions, so each changed trip costs one route
      // read: at most ROUTE_READS per round, the longest unread first.
      todo.sort(function (a, b) { return (S.readAt[a.trip_id] || 0) - (S.readAt[b.trip_id] || 0); });
      return runLimited(todo.slice(0, ROUTE_READS), 4, function (t) {
        S.readAt[t.trip_id] = Date.now();
        return api('GET', '/v1/trips/' + encodeURIComponent(t.trip_id) + '/route?include_waypoints=false&simplify_geometry=false').then(function (r) {
          S.trips[t.trip_id] = t.updated_at;
          var cs = (r.route_geometry && r.route_geometry.coordinates) || [];
          var last = cs[cs.length - 1] || (t.start_location && [t.start_location.longitude, t.start_location.latitude]);
          if (last) moveVehicle(t.vehicle_id, [last[1], last[0]]);
        }, function () {});
      });
    }).then(function () { S.polling = 0; }, function () { S.polling = 0; });
  }

  // listTrips reads every trip of a status, a page of 200 at a time (25
  // pages at most).
  function listTrips(status, cursor, acc, pages) {
    var q = '/v1/trips?status=' + status + '&limit=200&include_analytics=false' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '');
    return api('GET', q).then(function (r) {
      acc = acc.concat((r && r.trips) || []);
      var next = r && r.pagination && r.pagination.next_cursor;
      return next && pages < 24 ? listTrips(status, next, acc, pages + 1) : acc;
    }, function () { return acc; });
  }

  function runLimited(items, n, fn) {
    var i = 0;
    function next() {
      if (i >= items.length) return Promise.resolve();
      return fn(items[i++]).then(next);
    }
    var workers = [];
    for (var k = 0; k < n; k++) workers.push(next());
    return Promise.all(workers);
  }

  // ---- emergency ----

  function pollIncidents() {
    api('GET', '/v1/emergency/incidents?limit=50').then(function (r) {
      var list = ((r && r.incidents) || []).filter(function (i) { return i.status === 'active' || i.status === 'escalated'; });
      var ul = $('incidents');
      if (!list.length) { ul.replaceChildren(empty('none active')); return; }
      ul.replaceChildren.apply(ul, list.map(function (i) {
        var li = document.createElement('li');
        li.dataset.incident = i.incident_id;
        var title = document.createElement('strong');
        title.textContent = i.event_type + ' ';
        li.append(title, badge('sev-' + sevOf(i.severity_level), i.severity_level), document.createTextNode(' '), badge('st-' + i.status, i.status));
        li.appendChild(dl([['vehicle', i.vehicle_id || '—'], ['reported', fmtTime(i.created_at || i.timestamp)], ['updates', (i.status_updates || []).length]]));
        if (i.location) {
          var b = button('Show on map', function () { focusEvent({ event_type: i.event_type, location: i.location, source: { vehicle_id: i.vehicle_id } }); });
          li.appendChild(b);
        }
        return li;
      }));
    }, function (err) { if (err.status === 403) $('incidents').replaceChildren(empty('the key cannot read incidents')); });
  }

  function sevOf(s) { return { moderate: 'medium' }[s] || s; }

  function fetchAlert(id) {
    return api('GET', '/v1/emergency/alerts/' + encodeURIComponent(id)).then(function (al) {
      var a = S.alerts[id];
      a.view = al;
      (al.recipients || []).forEach(function (r) { a.recipients[r.recipient_id] = true; });
      queueRender();
    }, function () {});
  }

  // refreshAlerts reads the active alerts of the organization (pages of
  // 200, 5 at most); an alert shown as active that is no longer listed
  // is read on its own, to show how it ended.
  function refreshAlerts() {
    listAll('/v1/emergency/alerts?status=active&limit=200', 'alerts', null, [], 0).then(function (list) {
      var listed = {};
      list.forEach(function (al) {
        listed[al.alert_id] = true;
        var a = S.alerts[al.alert_id] || (S.alerts[al.alert_id] = { id: al.alert_id, recipients: {}, view: null });
        a.view = al;
        (al.recipients || []).forEach(function (r) { a.recipients[r.recipient_id] = true; });
      });
      Object.keys(S.alerts).forEach(function (id) {
        var a = S.alerts[id];
        if (listed[id] || (a.view && a.view.status && a.view.status !== 'active')) return;
        fetchAlert(id);
      });
      queueRender();
    }, function () {
      // a server without the listing: read each alert seen on the stream
      Object.keys(S.alerts).forEach(function (id) {
        var a = S.alerts[id];
        if (a.view && a.view.status && a.view.status !== 'active') return;
        fetchAlert(id);
      });
    });
  }

  // listAll follows a listing's cursors (5 pages at most) and resolves
  // to its items; it rejects when the first page cannot be read.
  function listAll(path, field, cursor, acc, pages) {
    return api('GET', path + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '')).then(function (r) {
      acc = acc.concat((r && r[field]) || []);
      var next = r && r.pagination && r.pagination.next_cursor;
      return next && pages < 4 ? listAll(path, field, next, acc, pages + 1) : acc;
    }, function (err) {
      if (pages === 0) throw err;
      return acc;
    });
  }

  function renderAlerts() {
    var ids = Object.keys(S.alerts);
    var ul = $('alerts');
    if (!ids.length) return;
    // newest first; an alert not read yet goes on top
    ids.sort(function (x, y) {
      var a = (S.alerts[x].view || {}).created_at || '~', b = (S.alerts[y].view || {}).created_at || '~';
      return a < b ? 1 : a > b ? -1 : 0;
    });
    var focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.ack : '';
    ul.replaceChildren.apply(ul, ids.map(function (id) {
      var a = S.alerts[id], al = a.view || {};
      var li = document.createElement('li');
      li.dataset.alert = id;
      var title = document.createElement('strong');
      title.textContent = (al.title || id) + ' ';
      li.append(title, badge('sev-' + sevOf(al.severity || 'low'), al.severity || ''), document.createTextNode(' '),
        badge('st-' + (al.status || 'active') + ' alert', al.status || 'active'));
      var ack = al.acknowledgment_status || {};
      li.appendChild(dl([['acknowledged', (ack.received || 0) + ' of ' + ((ack.received || 0) + (ack.pending || 0))]]));
      (al.recipients || []).forEach(function (r) {
        var row = document.createElement('p');
        row.className = 'recipient';
        row.textContent = r.recipient_id + (r.vehicle_id ? ' (' + r.vehicle_id + ')' : '') + ': ';
        if (r.acknowledged_at) {
          row.appendChild(span('acked', 'acknowledged ' + fmtTime(r.acknowledged_at)));
        } else if (al.status === 'active') {
          var b = button('Acknowledge', function () { acknowledge(id, r.recipient_id, b); });
          b.dataset.ack = id + '/' + r.recipient_id;
          row.appendChild(b);
        } else {
          row.appendChild(span('pending', 'not acknowledged'));
        }
        li.appendChild(row);
      });
      return li;
    }));
    if (focused) {
      var again = ul.querySelector('[data-ack="' + CSS.escape(focused) + '"]');
      if (again) again.focus();
    }
  }

  function acknowledge(id, recipient, b) {
    b.disabled = true;
    api('POST', '/v1/emergency/alerts/' + encodeURIComponent(id) + '/acknowledge',
      { recipient_id: recipient, recipient_type: 'dispatcher', note: 'acknowledged from the dispatch console' }).then(function (al) {
      S.alerts[id].view = al;
      queueRender();
    }, function (err) {
      b.disabled = false;
      $('streams-error').textContent = 'Acknowledge failed: ' + err.message;
    });
  }

  // ---- streams ----

  // refreshStreams reads every stream of the organization (pages of 200,
  // 5 at most) with its status; a followed stream missing from the
  // listing, or every one when the listing cannot be read, is read on its
  // own.
  function refreshStreams() {
    listAll('/api/v1/streaming/streams?limit=200', 'streams', null, [], 0).then(function (list) {
      S.orgStreams = list;
      var byID = {};
      list.forEach(function (st) { byID[st.stream_id] = st; });
      S.streams.forEach(function (s) {
        if (byID[s.id]) { s.status = byID[s.id]; } else { readStatus(s); }
      });
      renderStreams();
    }, function () {
      S.orgStreams = [];
      S.streams.forEach(readStatus);
    });
  }

  function readStatus(s) {
    api('GET', '/api/v1/streaming/' + s.type + '/status/' + encodeURIComponent(s.id)).then(function (st) {
      s.status = st;
      renderStreams();
    }, function (err) { s.status = { status: err.code || 'unreadable' }; renderStreams(); });
  }

  // renderStreams shows the followed streams, then the organization's
  // others, each with a Follow button when it delivers over websocket.
  function renderStreams() {
    var ul = $('streams');
    var followed = {};
    S.streams.forEach(function (s) { followed[s.id] = true; });
    var others = (S.orgStreams || []).filter(function (st) { return !followed[st.stream_id]; }).map(function (st) {
      return { id: st.stream_id, type: st.stream_type, other: true, status: st };
    });
    ul.replaceChildren.apply(ul, S.streams.concat(others).map(function (s) {
      var st = s.status || {};
      var li = document.createElement('li');
      li.dataset.stream = s.id;
      if (s.other) li.dataset.other = 'true';
      var title = document.createElement('strong');
      title.textContent = s.id + ' ';
      var note = s.other ? '' : ' (followed)';
      li.append(title, badge('st-' + (st.status || 'unknown'), st.status || '…'),
        document.createTextNode(' ' + s.type + (st.delivery_method === 'webhook' ? ' webhook' : '') + note));
      var c = st.counters || {}, lag = st.lag || {}, p = S.positions[s.id] || {};
      var rows = [['clients', st.connected_clients == null ? '—' : st.connected_clients], ['matched', c.matched || 0],
        ['delivered', c.delivered || 0], ['last offset', lag.last_offset || 0],
        ['read up to', p.offset || 0], ['pipeline lag', lag.pipeline_lag_ms == null ? '—' : lag.pipeline_lag_ms + ' ms']];
      if (st.webhook) {
        // pending: waiting to be sent (queued, parked behind an open
        // circuit, or replayed); retrying: failed, waiting for a retry
        var w = st.webhook, wc = w.counts || {};
        var circ = w.circuit || 'unknown';
        rows.push(['circuit', badge('circuit-' + circ, circ.replace('_', '-') + (w.disabled ? ' (disabled)' : ''))],
          ['pending', wc.pending || 0], ['retrying', wc.failed || 0], ['dead letters', wc.dead_lettered || 0]);
      }
      li.appendChild(dl(rows));
      if (st.webhook && (st.webhook.counts || {}).dead_lettered) {
        var r = button('Replay dead letters', function () { replayDead(s); });
        r.dataset.replay = s.id;
        li.appendChild(r);
      }
      if (s.other && st.delivery_method === 'websocket' && st.status !== 'stopped') {
        var f = button('Follow', function () { follow(s.id, s.type, st); });
        f.dataset.follow = s.id;
        li.appendChild(f);
      }
      return li;
    }));
  }

  function replayDead(s) {
    var base = '/api/v1/streaming/' + s.type + '/deliveries/' + encodeURIComponent(s.id);
    api('GET', base + '?status=dead_lettered&limit=200').then(function (r) {
      var ids = ((r && r.deliveries) || []).map(function (d) { return d.id; });
      if (!ids.length) return null;
      return api('POST', base + '/replay', { delivery_ids: ids });
    }).then(function (r) {
      $('streams-error').textContent = r ? s.id + ': ' + r.requeued + ' deliveries requeued' : '';
      refreshStreams();
    }, function (err) { $('streams-error').textContent = 'Replay failed: ' + err.message; });
  }

  function addStream(ev) {
    ev.preventDefault();
    var id = $('add-stream-id').value.trim(), type = $('add-stream-type').value;
    if (!id || S.streams.some(function (s) { return s.id === id; })) return;
    api('GET', '/api/v1/streaming/' + type + '/status/' + encodeURIComponent(id)).then(function (st) {
      $('add-stream-id').value = '';
      follow(id, type, st);
    }, function (err) { $('streams-error').textContent = id + ': ' + err.message; });
  }

  // follow adds a stream to the ones this console reads.
  function follow(id, type, st) {
    if (S.streams.some(function (s) { return s.id === id; })) return;
    var s = { id: id, type: type, own: false, status: st };
    S.streams.push(s);
    saveStreams();
    $('streams-error').textContent = '';
    renderStreams();
    if (S.ws && S.wsOpen) { startOffsets().then(function () { subscribe(s); }); } else { connect(); }
  }

  // ---- small DOM helpers ----

  function badge(cls, text) { var b = span('badge ' + cls, text); return b; }
  function empty(text) { var li = document.createElement('li'); li.className = 'empty'; li.textContent = text; return li; }
  function button(text, fn) {
    var b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.addEventListener('click', fn);
    return b;
  }
  function dl(rows) {
    var d = document.createElement('dl');
    rows.forEach(function (r) {
      var dt = document.createElement('dt'), dd = document.createElement('dd');
      dt.textContent = r[0];
      if (r[1] instanceof Node) dd.appendChild(r[1]); else dd.textContent = String(r[1]);
      d.append(dt, dd);
    });
    return d;
  }

  // Diagnostics: counters of the stream reader, and a way to drop the
  // connection to watch it resume.
  window.fleethubConsole = {
    stats: S.stats,
    positions: function () { return JSON.parse(JSON.stringify(S.positions)); },
    cursors: function () { return S.readers.map(function (r) { return r.cursor; }); },
    drop: function () {
      S.readers.forEach(function (r) { if (r.ctl) r.ctl.abort(); });
      if (S.ws) S.ws.close(3000, 'dropped');
    }
  };

  // ---- wiring ----

  document.addEventListener('DOMContentLoaded', function () {
    $('signin-form').addEventListener('submit', function (ev) {
      ev.preventDefault();
      var k = $('key').value.trim();
      $('key').value = '';
      if (k) signIn(k);
    });
    $('signout').addEventListener('click', signOut);
    $('feed-filters').addEventListener('input', refilter);
    $('feed-filters').addEventListener('submit', function (ev) { ev.preventDefault(); });
    $('add-stream').addEventListener('submit', addStream);
    sessionStorage.removeItem(KEY); // an earlier console kept the key there
    var k = keyFromFragment();
    var t = storedToken();
    if (k) { signIn(k); k = ''; return; }
    if (t) { signedIn(t); return; }
    $('signin-error').textContent = sessionStorage.getItem(ENDED) || '';
    $('key').focus();
  });
})();
