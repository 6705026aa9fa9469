// The change cards (templates/approvals/_card.html), on the inbox page and in the owner chat.
// Approve / Reject: authorize; L1/L2 answer with a one-time token, which decides at once; L3
// e-mails a code, typed into the card's code field, verified for a token, which decides.  Every
// decide sends the card's version (compare-and-swap) and the owner's optional reason.  After each step the card is reloaded from
// the server (…/inbox/<id>/card), so it always shows what the server holds.  The code is only
// ever sent to verify; it is never stored or shown.
(function () {
  "use strict";
  var island = document.getElementById("approvals-text");
  var T = island ? JSON.parse(island.textContent) : {};

  function fill(template, values) {
    return String(template || "").replace(/\{(\w+)\}/g, function (all, name) { return name in values ? String(values[name]) : all; });
  }
  function csrf() {
    var match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  async function post(url, body, method) {
    var res = await fetch(url, {
      method: method || "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrf()},
      body: JSON.stringify(body || {})
    });
    var data = await res.json().catch(function () { return {}; });
    if (!res.ok) { data.status = res.status; data.error = data.error || "error"; throw data; }
    return data;
  }
  async function fragment(url) {
    var res = await fetch(url, {credentials: "same-origin", headers: {"Accept": "text/html"}});
    if (!res.ok) { throw {error: "error", status: res.status}; }
    var holder = document.createElement("div");
    holder.innerHTML = (await res.text()).trim();   // our own server-rendered, escaped template
    var card = holder.querySelector("article.change-card");
    if (!card) { throw {error: "error", status: res.status}; }   // e.g. signed out: the sign-in page came back
    return card;
  }

  function say(card, text) { card.querySelector(".card-status").textContent = text || ""; }
  function fail(card, text) {
    var box = card.querySelector(".card-error");
    box.textContent = text || "";
    box.hidden = !text;
  }
  function busy(card, on) {
    card.setAttribute("aria-busy", on ? "true" : "false");
    card.querySelectorAll("button").forEach(function (b) { b.disabled = on; });
  }
  function problem(err) {
    if (err.error === "wrong_code") {
      return err.remaining_attempts > 0 ? fill(T.wrong_code, {n: err.remaining_attempts}) : T.code_dead;
    }
    if (err.error === "too_many_challenges") { return fill(T.too_many_challenges, {seconds: err.retry_after || 60}); }
    return T[err.error] || err.detail || T.other;
  }

  // Reload a card from the server in place; `message` goes into its status line, and the focus
  // moves to it when it was inside the card (so a keyboard user stays where they were).
  async function refresh(card, message) {
    var hadFocus = card.contains(document.activeElement) || card.dataset.hadFocus === "1";
    var fresh = await fragment(card.dataset.card);
    card.replaceWith(fresh);
    say(fresh, message);
    if (hadFocus) { fresh.querySelector("h3").focus(); }
    return fresh;
  }
  function outcome(result) {
    if (result.status === "applied" && result.contract_version) { return fill(T.published, {version: result.contract_version}); }
    if (result.status === "pending" && result.awaiting === "second_owner") { return T.second_owner; }
    return T[result.status] || "";
  }

  async function decide(card, token, decision) {
    var body = {token: token, decision: decision, expected_version: Number(card.dataset.version)};
    var reason = card.querySelector('input[name="reason"]');   // optional, the owner's own words
    if (reason && reason.value.trim()) { body.reason = reason.value.trim(); }
    var result = await post(card.dataset.api + "/decide", body);
    var live = document.querySelector(".ib .contract");
    if (live && result.contract_version) { live.textContent = fill(T.live_contract, {version: result.contract_version}); }
    // An applied roll-back changes the card of the change it undid too (now rolled back).
    var undone = card.dataset.rollbackOf && document.getElementById(card.dataset.rollbackOf);
    if (undone && undone.classList.contains("change-card")) { refresh(undone, "").catch(function () {}); }
    return refresh(card, outcome(result));
  }
  async function authorize(card, decision) {
    if (card.dataset.level === "3") { say(card, T.sending_code); }
    var granted = await post(card.dataset.api + "/authorize", {decision: decision});
    if (granted.token) { return decide(card, granted.token, decision); }
    // L3: the code went by e-mail; the card asks for it.  Nothing is working any more: the card
    // waits for the owner, and says where the code went (masked) — and, in the demo, where to
    // read it (the outbox link the server rendered into the form).
    card.dataset.challenge = granted.challenge_id;
    card.dataset.decision = decision;
    var form = card.querySelector(".code-form");
    form.hidden = false;
    form.querySelector(".sent-to").textContent = fill(T.sent_to, {address: granted.sent_to});
    form.code.value = "";
    card.dataset.waiting = "1";
    return card;
  }
  async function verify(card, code) {
    var body = {challenge_id: card.dataset.challenge, code: code};
    var totp = card.querySelector(".code-form").totp;   // where the business requires the authenticator too
    if (totp) { body.totp = totp.value.replace(/\s+/g, ""); }
    var issued = await post(card.dataset.api + "/authorize/verify", body);
    return decide(card, issued.token, card.dataset.decision);
  }
  async function rollback(card) {
    var proposal = await post(card.dataset.api + "/rollback", {});
    var url = card.dataset.card.replace(card.dataset.id, proposal.id);
    var fresh = await fragment(url);
    var holder = card.closest("li") && card.closest("ol.change-list") ? document.createElement("li") : null;
    if (holder) { holder.appendChild(fresh); card.closest("li").before(holder); } else { card.after(fresh); }
    await refresh(card, "");
    say(fresh, fill(T.rolled_back, {id: proposal.id}));
    fresh.querySelector("h3").focus();
  }

  async function run(card, step) {
    // Disabling the buttons drops the focus: remember whether it was in the card, to put it back.
    var active = card.contains(document.activeElement) ? document.activeElement : null;
    if (active) { card.dataset.hadFocus = "1"; }
    fail(card, "");
    say(card, T.working);
    busy(card, true);
    try {
      await step();
    } catch (err) {
      if (!document.body.contains(card)) { return; }
      busy(card, false);
      delete card.dataset.hadFocus;
      if (active && !card.contains(document.activeElement)) { active.focus(); }
      say(card, "");
      fail(card, problem(err || {}));
      if (err && err.error === "stale_base") {
        var rebase = card.querySelector('[data-action="rebase"]');
        rebase.hidden = false;
        rebase.focus();
      } else if (err && (err.error === "version_mismatch" || err.error === "not_pending")) {
        refresh(card, problem(err)).catch(function () {});
      } else if (err && err.error === "invalid_challenge") {
        card.querySelector(".code-form").code.value = "";
      } else if (err && err.error === "wrong_code") {
        var input = card.querySelector(".code-form").code;
        input.value = "";
        input.focus();
      }
      return;
    }
    if (document.body.contains(card)) {
      busy(card, false);
      delete card.dataset.hadFocus;
      if (card.dataset.waiting === "1") {
        // The code step: the owner acts next (the status line says so, the code field has the focus).
        delete card.dataset.waiting;
        say(card, T.waiting_code);
        card.querySelector(".code-form").code.focus();
        return;
      }
      if (active && !card.contains(document.activeElement) && document.activeElement === document.body) { active.focus(); }
    }
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest(".change-card button[data-action]");
    if (!button) { return; }
    var card = button.closest(".change-card"), action = button.dataset.action;
    if (action === "approve" || action === "reject") {
      run(card, function () { return authorize(card, action); });
    } else if (action === "resend") {
      run(card, function () { return authorize(card, card.dataset.decision || "approve"); });
    } else if (action === "rebase") {
      run(card, function () {
        return post(card.dataset.api + "/rebase", {expected_version: Number(card.dataset.version)})
          .then(function () { return refresh(card, T.rebased); });
      });
    } else if (action === "rollback") {
      run(card, function () { return rollback(card); });
    }
  });
  // A knowledge draft's editor: the owner's title and text replace the draft's (PATCH, with the
  // card's version), and the card comes back as the server holds it, ready to approve.
  async function save(card, form) {
    var payload = JSON.parse(form.dataset.payload || "{}");
    payload.title = form.elements.namedItem("title").value;
    payload.text = form.elements.namedItem("text").value;
    var language = form.elements.namedItem("translation_language");
    if (language) {
      // The same answer in the other language: kept when written, left out when blank.
      var other = {
        title: form.elements.namedItem("translation_title").value.trim(),
        text: form.elements.namedItem("translation_text").value.trim()
      };
      payload.translations = {};
      if (other.title || other.text) { payload.translations[language.value] = other; }
    }
    await post(card.dataset.api, {payload: payload, expected_version: Number(card.dataset.version)}, "PATCH");
    return refresh(card, T.saved);
  }
  document.addEventListener("submit", function (event) {
    var draft = event.target.closest(".change-card form.draft-form");
    if (draft) {
      event.preventDefault();
      var owner = draft.closest(".change-card");
      run(owner, function () { return save(owner, draft); });
      return;
    }
    var form = event.target.closest(".change-card form.code-form");
    if (!form) { return; }
    event.preventDefault();
    var card = form.closest(".change-card"), code = form.code.value.replace(/\s+/g, "");
    if (!/^[0-9]{6}$/.test(code)) { fail(card, T.code_format); form.code.focus(); return; }
    run(card, function () { return verify(card, code); });
  });

  // A replay still running (its section says "replaying…"): only that section is fetched again
  // every few seconds until it is done, so nothing the owner is typing into the card is lost.
  var polls = 0;
  var poller = setInterval(function () {
    var running = document.querySelectorAll("article.change-card .replay[data-state='running']");
    if (!running.length) { return; }
    if (++polls > 200) { clearInterval(poller); return; }
    running.forEach(function (section) {
      var card = section.closest("article.change-card");
      fragment(card.dataset.card).then(function (fresh) {
        var next = fresh.querySelector(".replay");
        if (next && section.isConnected) { section.replaceWith(next); }
      }).catch(function () {});
    });
  }, 3000);

  // The owner chat puts a card into a reply: a placeholder is replaced by the server's card.
  window.FacadeApprovals = {
    show: function (holder, url) {
      return fragment(url).then(function (card) { holder.replaceChildren(card); }).catch(function () {
        holder.textContent = T.other;
      });
    }
  };
})();
