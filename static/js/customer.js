// The chat (customer page and owner chat).  It opens a session on the first message — or
// resumes the one stored for this agent — and talks over the session's WebSocket: history on
// connect, progress, a streamed reply, citations, the registered request, Stop and a rating.
// Every message carries a client_message_id, so re-sending after a reconnect never runs a
// turn twice.  Without WebSockets it falls back to the HTTP endpoints.
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("chat-config").textContent);
  var T = config.texts;
  var $ = function (id) { return document.getElementById(id); };
  var form = $("send"), log = $("log"), statusBox = $("status"), errorBox = $("error");
  var stopButton = $("stop"), notice = $("notice"), textarea = form.text;
  // A preview (an owner trying the customer face) keeps its own session apart from the owner chat's.
  var storeKey = "facade.chat." + (config.preview ? "preview" : config.mode) + "." + config.agent;
  var BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 15000, 30000];

  var state = loadState();           // {id, audience, pending: {cid: text}}
  var ws = null, wsEverOpened = false, failures = 0, useHttp = !("WebSocket" in window);
  var reconnectTimer = null, opening = null, running = {}, rated = false, httpChain = Promise.resolve();

  function loadState() {
    try { return JSON.parse(localStorage.getItem(storeKey)) || {pending: {}}; } catch (e) { return {pending: {}}; }
  }
  function saveState() {
    try { localStorage.setItem(storeKey, JSON.stringify(state)); } catch (e) { /* private mode: memory only */ }
  }
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (all, name) { return name in values ? String(values[name]) : all; });
  }
  function newId() {
    if (window.crypto && crypto.randomUUID) { return crypto.randomUUID(); }
    return "m-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
  }
  function csrf() {
    var match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  async function http(method, url, body) {
    var res = await fetch(url, {
      method: method, credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": csrf()},
      body: body === undefined ? undefined : JSON.stringify(body)
    });
    var data = await res.json().catch(function () { return {}; });
    if (!res.ok) { data.status = res.status; data.error = data.error || "error"; throw data; }
    return data;
  }
  function showError(box, message) { box.textContent = message; box.hidden = !message; }

  // --- the length of a message -------------------------------------------------------------
  // The server refuses a text longer than config.maxChars (its own setting); the box has no
  // maxlength, which would cut a pasted text silently.  The count shows from COUNT_FROM of the
  // limit, and an over-long text is refused here with the text kept.  Characters are counted
  // as the server counts them (code points: an emoji is one).
  var COUNT_FROM = 0.8, countBox = $("text-count");
  function length(text) { return Array.from(text).length; }
  function overBy(text) { return length(text) - config.maxChars; }
  function showCount() {
    var count = length(textarea.value), over = count - config.maxChars;
    countBox.hidden = count < COUNT_FROM * config.maxChars;
    countBox.textContent = fill(over > 0 ? T.count_over : T.count, {count: count, max: config.maxChars, over: over});
    countBox.classList.toggle("over", over > 0);
    if (over > 0) { textarea.setAttribute("aria-invalid", "true"); } else { textarea.removeAttribute("aria-invalid"); }
  }
  function setStatus(message) { statusBox.textContent = message || ""; }

  // --- rendering -------------------------------------------------------------------------

  function bubble(role, text, attrs) {
    var item = document.createElement("li");
    item.className = "msg " + (role === "principal" ? "mine" : "theirs") + (role === "owner" ? " owner" : "");
    var who = document.createElement("span");
    who.className = "who";
    who.textContent = role === "principal" ? T.you : (role === "owner" ? T.business : T.agent);
    var body = document.createElement("p");
    body.className = "text";
    body.textContent = text;
    item.append(who, body);
    Object.keys(attrs || {}).forEach(function (key) { if (attrs[key]) { item.dataset[key] = attrs[key]; } });
    log.appendChild(item);
    return item;
  }
  function find(attr, value) {
    return value ? log.querySelector("li[data-" + attr + '="' + CSS.escape(String(value)) + '"]') : null;
  }
  function note(item, text) {
    var old = item.querySelector(".note");
    if (old) { old.remove(); }
    if (text) { var n = document.createElement("span"); n.className = "note"; n.textContent = text; item.appendChild(n); }
  }
  function citations(item, list) {
    if (!list || !list.length || item.querySelector(".sources")) { return; }
    var box = document.createElement("div");
    box.className = "sources";
    var title = document.createElement("p");
    title.textContent = T.sources;
    var ul = document.createElement("ul");
    list.forEach(function (c) {
      var li = document.createElement("li");
      // A knowledge entry, or the price list or delivery options the owner published (no entry).
      li.textContent = c.published ? fill(T.published_citation, {title: c.title})
        : fill(T.citation, {title: c.title, entry: c.entry_id, version: c.version});
      ul.appendChild(li);
    });
    box.append(title, ul);
    item.appendChild(box);
  }
  // The owner face: a proposal card the reply carries, as the inbox shows it (static/js/approvals.js
  // loads the server's card and drives its buttons).
  function cards(item, list) {
    if (!list || !list.length || !config.cardUrl || !window.FacadeApprovals || item.querySelector(".chat-card")) { return; }
    list.forEach(function (card) {
      var holder = document.createElement("div");
      holder.className = "chat-card";
      item.appendChild(holder);
      window.FacadeApprovals.show(holder, config.cardUrl.replace("__id__", encodeURIComponent(card.id)));
    });
  }
  function showRequest(request) {
    var list = $("request-list");
    if (!request || !list || state.audience === "owner") { return; }
    var card = list.querySelector('[data-request="' + request.id + '"]') || document.createElement("li");
    card.dataset.request = request.id;
    card.className = "request";
    card.textContent = "";
    var head = document.createElement("strong");
    head.textContent = fill(request.kind === "handoff" ? T.handoff : T.request, {id: request.id});
    var summary = document.createElement("p");
    summary.textContent = request.summary;
    var st = document.createElement("p");
    st.textContent = fill(T.state, {state: T.states[request.state] || request.state});
    var next = document.createElement("p");
    next.textContent = fill(T.next, {actor: T.actors[request.next_actor] || request.next_actor});
    card.append(head, summary, st, next);
    if (request.state === "submitted" && state.id) { card.appendChild(withdrawButton(request, state.id)); }
    list.appendChild(card);
    $("requests").hidden = false;
  }
  // While the business has not acted, the customer may take a request back: a first click asks
  // again, the second withdraws (the server refuses once the business has acted).
  function withdrawButton(request, sessionId) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "secondary withdraw";
    button.textContent = T.withdraw;
    button.addEventListener("click", function () {
      if (!button.dataset.armed) { button.dataset.armed = "1"; button.textContent = T.withdraw_confirm; return; }
      button.disabled = true;
      http("POST", "/api/sessions/" + sessionId + "/requests/" + request.id + "/withdraw", {})
        .then(function (updated) { showError(errorBox, ""); showRequest(updated); })
        .catch(function (err) {
          button.remove();
          showError(errorBox, T.errors[err.error] || err.detail || T.errors.other);
        });
    });
    return button;
  }
  function offerRating() {
    var box = $("rating");
    if (!box || state.audience === "owner") { return; }
    box.hidden = !log.querySelector("li.theirs[data-id]");
    $("rate").hidden = rated;
    $("rated").hidden = !rated;
  }
  function renderHistory(history) {
    state.audience = history.audience || state.audience;
    log.textContent = "";
    history.messages.forEach(function (m) {
      var item = bubble(m.role, m.text, {id: m.id, cid: m.role === "principal" ? m.client_message_id : ""});
      if (m.role === "agent") { citations(item, m.citations); cards(item, m.cards); }
    });
    (history.requests || []).forEach(showRequest);
    notice.hidden = !(config.mode === "customer" && state.audience === "owner");
    notice.textContent = T.owner_face;
    rated = !!history.rated;
    offerRating();
    // Ended by a change of the agent's contract: the next message is answered with the session
    // that continues it (session_continued), so the conversation stays, and so does what waits.
    if (history.status && history.status !== "open" && history.closed_reason !== "contract_republished") {
      endSession();
      return false;
    }
    return true;
  }
  function resume(history) {
    if (renderHistory(history)) { sendPending(); } else { restart(); }
  }
  function restart() {   // the stored session is gone or over: what waits goes to a new one
    if (Object.keys(state.pending).length) { ensureSession().catch(networkTrouble); }
  }

  // --- turns -----------------------------------------------------------------------------

  function busy() {
    var any = Object.keys(running).length > 0;
    stopButton.hidden = !any;
    log.setAttribute("aria-busy", any ? "true" : "false");
    if (!any) { setStatus(""); }
  }
  function sendPending() {
    Object.keys(state.pending).forEach(function (cid) {
      var mine = find("cid", cid) || bubble("principal", state.pending[cid], {cid: cid});
      if (!mine.dataset.id || !mine.nextElementSibling || !mine.nextElementSibling.classList.contains("theirs")) {
        note(mine, T.sending);
        deliver(cid, state.pending[cid]);
      } else {
        delete state.pending[cid];
      }
    });
    saveState();
  }
  function deliver(cid, text) {
    if (useHttp) {
      httpChain = httpChain.then(function () { return httpTurn(cid, text); });   // one at a time, in order
    } else if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({type: "message", text: text, client_message_id: cid}));
    } else {
      return;   // still pending: sent again once the connection is back
    }
    running[cid] = true;
    busy();
  }
  async function httpTurn(cid, text) {
    setStatus(T.progress.thinking);
    var body;
    try {
      body = await http("POST", "/api/sessions/" + state.id + "/messages", {text: text, client_message_id: cid});
    } catch (err) {
      // No answer at all (fetch failed) is waited out like a 503: the message may be stored
      // already, and sending it again by its client_message_id answers it once.
      var code = err.status === undefined ? "temporarily_unavailable" : err.error;
      onError({code: code, detail: err.detail, retry_after: err.retry_after, client_message_id: cid, session: err.session});
      return;
    }
    // Outside the try: a fault in showing the answer is not a lost request to send again.
    body.client_message_id = cid;
    onReply(body);
  }
  function onDelta(frame) {
    var item = find("stream", frame.client_message_id);
    if (!item) { item = bubble("agent", "", {stream: frame.client_message_id}); }
    item.querySelector(".text").textContent += frame.text;
  }
  function onReply(frame) {
    var cid = frame.client_message_id;
    if (frame.duplicate && !frame.reply && state.pending[cid] !== undefined) {
      // Stored, but its turn has not answered yet (still running elsewhere, or broken off and
      // not yet answered by the sweep): keep the message and ask again, by the same id.
      waitAndResend(cid, 10);
      return;
    }
    var mine = find("cid", cid) || find("id", frame.message.id) || bubble("principal", frame.message.text, {cid: cid});
    mine.dataset.id = frame.message.id;
    note(mine, "");
    delete running[cid];
    delete state.pending[cid];
    saveState();
    waitingDone(cid);
    var reply = frame.reply;
    var item = find("stream", cid);
    if (reply && !find("id", reply.id)) {
      if (!item) { item = bubble("agent", "", {}); }
      item.querySelector(".text").textContent = reply.text;
      item.dataset.id = reply.id;
      delete item.dataset.stream;
      citations(item, reply.citations);
      cards(item, reply.cards);
      if (mine.nextElementSibling !== item) { mine.after(item); }
    } else if (item) {
      item.remove();
    }
    showRequest(frame.request);
    offerRating();
    busy();
  }
  // The server could not take a message yet (Redis away: 503 or an error frame
  // `temporarily_unavailable`; over HTTP also no answer at all): the message stays pending, is
  // marked as waiting and is sent again after retry_after (doubling while it keeps failing).
  // Its client_message_id makes a second delivery harmless: the server answers it once.
  var waitTimers = {}, waitTries = {}, WAIT_MAX_S = 30;
  function waitAndResend(cid, seconds) {
    var mine = find("cid", cid) || bubble("principal", state.pending[cid], {cid: cid});
    note(mine, T.waiting);
    mine.dataset.waiting = "1";
    showError(errorBox, T.errors.temporarily_unavailable);
    delete running[cid];
    busy();
    waitTries[cid] = (waitTries[cid] || 0) + 1;
    var delay = Math.min(WAIT_MAX_S, (seconds || 5) * Math.pow(2, Math.min(waitTries[cid] - 1, 3)));
    clearTimeout(waitTimers[cid]);
    waitTimers[cid] = setTimeout(function () {
      delete waitTimers[cid];
      if (state.pending[cid] === undefined) { return; }
      note(mine, T.sending);
      deliver(cid, state.pending[cid]);
    }, delay * 1000 * (0.8 + Math.random() * 0.4));
  }
  function waitingDone(cid) {
    clearTimeout(waitTimers[cid]);
    delete waitTimers[cid];
    delete waitTries[cid];
    var mine = find("cid", cid);
    if (mine) { delete mine.dataset.waiting; }
    if (!log.querySelector("li[data-waiting]") && errorBox.textContent === T.errors.temporarily_unavailable) {
      showError(errorBox, "");
    }
  }
  function onError(frame) {
    var cid = frame.client_message_id, code = frame.code || "error";
    if (code === "session_continued" && frame.session) { continueIn(frame.session); return; }
    if (code === "temporarily_unavailable" && cid && state.pending[cid] !== undefined) {
      waitAndResend(cid, frame.retry_after);
      return;
    }
    var message = T.errors.other;
    if (code === "rate_limited") { message = fill(T.errors.rate_limited, {seconds: frame.retry_after || 60}); }
    else if (code === "message_too_long") { message = fill(T.errors.message_too_long, {max: config.maxChars}); }
    else if (code === "empty_message") { message = form.dataset.empty; }
    else if (code === "no_longer_owner") { message = T.errors.no_longer_owner; }
    else if (/^session_/.test(code)) { message = T.errors.session_ended; endSession(); }
    else if (frame.detail) { message = frame.detail; }
    if (code === "already_rated") { rated = true; offerRating(); return; }
    if (code === "invalid_rating") { showError($("rate-error"), T.errors.rating); return; }
    showError(errorBox, message);
    if (cid && state.pending[cid] !== undefined) {
      // Refused, not stored: the text goes back into the box for another try.
      if (!textarea.value) { textarea.value = state.pending[cid]; showCount(); }
      var mine = find("cid", cid);
      if (mine) { mine.remove(); }
      delete state.pending[cid];
      saveState();
    }
    if (cid) { delete running[cid]; }
    busy();
  }
  // A change of the agent's contract took away what the conversation relied on and ended its
  // session: it goes on in the session the server names, whose history holds the same messages
  // and requests.  The refused message stays pending and is sent again there, by the same id.
  function continueIn(sessionId) {
    if (state.id === sessionId) { return; }   // the other refusals of the same change
    state.id = sessionId;
    saveState();
    running = {};
    busy();
    if (ws) { ws.onclose = null; ws.close(); ws = null; }
    connect();
  }
  function onOwnerReply(frame) {   // the business answered a request, from the owner's Requests page
    if (!find("id", frame.message.id)) { bubble("owner", frame.message.text, {id: frame.message.id}); }
    showRequest(frame.request);
  }
  function endSession() {
    state = {pending: state.pending || {}};
    running = {};
    rated = false;
    saveState();
    if (ws) { ws.onclose = null; ws.close(); ws = null; }
  }

  // --- the connection --------------------------------------------------------------------

  function connect() {
    if (useHttp) { return loadOverHttp(); }
    clearTimeout(reconnectTimer);
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/sessions/" + state.id + "/";
    var socket = ws = new WebSocket(url);
    socket.onopen = function () { wsEverOpened = true; failures = 0; setStatus(""); };
    socket.onmessage = function (event) {
      var frame = JSON.parse(event.data);
      if (frame.type === "history") { resume(frame); }
      else if (frame.type === "progress") {
        running[frame.client_message_id] = true;
        busy();
        setStatus(frame.state === "done" ? "" : (T.progress[frame.state] || T.progress.working));
      }
      else if (frame.type === "delta") { onDelta(frame); }
      else if (frame.type === "reply") { onReply(frame); }
      else if (frame.type === "rated") { rated = true; offerRating(); }
      else if (frame.type === "owner_reply") { onOwnerReply(frame); }
      else if (frame.type === "request") { showRequest(frame.request); }
      else if (frame.type === "error") { onError(frame); }
    };
    socket.onclose = function (event) {
      if (ws !== socket) { return; }
      ws = null;
      running = {};
      busy();
      if (event.code === 4404) { endSession(); restart(); return; }   // no such session for us (any more)
      failures += 1;
      if (!wsEverOpened && failures >= 2) { useHttp = true; return loadOverHttp(); }
      setStatus(T.reconnecting);
      reconnectTimer = setTimeout(connect, BACKOFF_MS[Math.min(failures - 1, BACKOFF_MS.length - 1)] * (0.8 + Math.random() * 0.4));
    };
  }
  async function loadOverHttp() {
    try {
      resume(await http("GET", "/api/sessions/" + state.id + "/messages"));
    } catch (err) {
      if (err.status === 404) { endSession(); restart(); return; }
      networkTrouble();
    }
  }
  function networkTrouble() { showError(errorBox, T.errors.network); }
  function ensureSession() {
    if (state.id) { return Promise.resolve(); }
    var url = "/api/agents/" + encodeURIComponent(config.agent) + (config.preview ? "/preview-sessions" : "/sessions");
    opening = opening || http("POST", url, {}).then(function (s) {
      state.id = s.id;
      state.audience = s.audience;
      saveState();
      connect();
    }).finally(function () { opening = null; });
    return opening;
  }

  // --- the controls ----------------------------------------------------------------------

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var text = textarea.value;
    showError(errorBox, "");
    if (!text.trim()) { showError(errorBox, form.dataset.empty); return; }
    if (overBy(text) > 0) {   // refused whole, kept in the box: never cut
      showError(errorBox, fill(T.errors.over_limit, {over: overBy(text), max: config.maxChars}));
      textarea.focus();
      return;
    }
    var cid = newId();
    state.pending[cid] = text;
    saveState();
    note(bubble("principal", text, {cid: cid}), T.sending);
    textarea.value = "";
    showCount();
    textarea.focus();
    if (!state.id) { ensureSession().catch(networkTrouble); return; }   // the history frame sends it
    if (useHttp || (ws && ws.readyState === WebSocket.OPEN)) { deliver(cid, text); }
    else if (!ws) { connect(); }
  });
  textarea.addEventListener("input", showCount);
  textarea.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  stopButton.addEventListener("click", function () {
    if (ws && ws.readyState === WebSocket.OPEN) { ws.send(JSON.stringify({type: "cancel"})); }
    else if (state.id) { http("POST", "/api/sessions/" + state.id + "/cancel", {}).catch(function () {}); }
    textarea.focus();
  });
  var rateForm = $("rate");
  if (rateForm) {
    rateForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var chosen = rateForm.querySelector("input[name=stars]:checked");
      if (!chosen) { showError($("rate-error"), T.errors.rating); return; }
      showError($("rate-error"), "");
      var rating = {stars: Number(chosen.value), comment: rateForm.comment.value};
      if (ws && ws.readyState === WebSocket.OPEN) { ws.send(JSON.stringify(Object.assign({type: "rate"}, rating))); return; }
      http("POST", "/api/sessions/" + state.id + "/rating", rating)
        .then(function () { rated = true; offerRating(); })
        .catch(function (err) { onError({code: err.error, detail: err.detail}); });
    });
  }

  if (state.id) { connect(); } else { restart(); }
})();
