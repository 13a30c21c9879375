// Hermes Desk agent console: plain JS over the public API (REST + the session WebSocket).
"use strict";

(() => {
  const BREAKER_REFRESH_MS = 5000;
  const RECONNECT_MS = 2000;
  const $ = (id) => document.getElementById(id);

  const state = {
    user: null,
    sessionId: null,
    socket: null,
    partials: new Map(), // speaker -> the greyed line of what speech recognition hears now
    reconnect: null,
    proposals: new Map(), // id -> the proposal as last seen (newest last)
    labels: {}, // section -> id -> {zh, en}, from GET /v1/pack/labels
    suggestion: null, // {turnIndex, text, intent} of the suggestion on screen
    rating: null, // true / false once rated
    alerts: [], // this session's alerts, newest first
    toolCalls: [], // the tool-calls table: the turn's calls, then workflow steps run since
    pending: 0, // customer turns sent and not answered yet
    // feedback answers can come back out of order (insert, then rate at once): only the
    // agent's latest feedback action, on the suggestion on screen, speaks in the status line
    feedbackSeq: 0,
  };

  // -- small helpers --------------------------------------------------------------------------

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function apiKey() {
    return $("api-key").value.trim();
  }

  async function api(path, options = {}) {
    const headers = { "content-type": "application/json", ...(options.headers || {}) };
    if (apiKey()) headers["x-api-key"] = apiKey();
    const response = await fetch(path, { ...options, headers });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const message = (body.error && body.error.message) || response.statusText;
      const error = new Error(`${response.status}: ${message}`);
      error.status = response.status;
      throw error;
    }
    return body;
  }

  // -- pack labels: names instead of ids -------------------------------------------------------

  /** "订单状态 Order status" for ("intents", "order_status"); the id itself when unlabelled. */
  function label(section, id) {
    if (id === null || id === undefined || id === "") return "—";
    const found = (state.labels[section] || {})[id];
    return found ? `${found.zh} ${found.en}` : String(id);
  }

  /** The Chinese name only, for tight tables (the id and English name go in the tooltip). */
  function shortLabel(section, id) {
    const found = (state.labels[section] || {})[id];
    return found ? found.zh : String(id);
  }

  function labelTitle(section, id) {
    const found = (state.labels[section] || {})[id];
    return found && found.en !== id ? `${id} · ${found.en}` : String(id);
  }

  async function loadLabels() {
    try {
      const body = await api("/v1/pack/labels");
      state.labels = body.labels || {};
    } catch {
      state.labels = {}; // without labels (a key not entered yet) the console shows ids
    }
  }

  function showAlert(message) {
    const box = $("alert");
    box.textContent = message;
    box.hidden = !message;
  }

  function setConnection(kind, label) {
    const pill = $("conn");
    pill.className = `pill pill-${kind}`;
    pill.textContent = label;
  }

  function setInputEnabled(enabled) {
    $("utterance").disabled = !enabled;
    $("send").disabled = !enabled;
    $("close-session").disabled = !state.sessionId;
  }

  function fillTable(body, rows, columns) {
    body.replaceChildren();
    if (!rows.length) {
      const tr = el("tr");
      const td = el("td", "empty", "—");
      td.colSpan = columns;
      tr.append(td);
      body.append(tr);
      return;
    }
    for (const cells of rows) {
      const tr = el("tr");
      for (const [text, className, title] of cells) {
        const td = el("td", className || "", text);
        if (title) td.title = title;
        tr.append(td);
      }
      body.append(tr);
    }
  }

  // -- transcript -----------------------------------------------------------------------------

  const WHO = { customer: "客户 Customer", agent: "坐席 Agent" };

  function transcriptLine(speaker, text, final) {
    const line = el("div", `line ${speaker}${final ? " final" : " partial"}`);
    line.dataset.speaker = speaker;
    line.append(el("span", "who", final ? WHO[speaker] : `${WHO[speaker]} · …`));
    line.append(el("span", "text", text));
    return line;
  }

  function addSegment(speaker, text, final) {
    const box = $("transcript");
    box.querySelector(".empty")?.remove();
    const pending = state.partials.get(speaker);
    if (pending) {
      pending.remove();
      state.partials.delete(speaker);
    }
    const line = transcriptLine(speaker, text, final);
    box.append(line);
    if (!final) state.partials.set(speaker, line);
    box.scrollTop = box.scrollHeight;
  }

  function showHistory(turns) {
    const box = $("transcript");
    box.replaceChildren();
    state.partials.clear();
    const said = turns.filter((t) => t.role === "user" || (t.role === "agent" && !t.tool_call_id));
    if (!said.length) {
      box.append(el("p", "empty", "等待客户发言 Waiting for the customer…"));
      return;
    }
    for (const turn of said) {
      box.append(transcriptLine(turn.role === "user" ? "customer" : "agent", turn.text, true));
    }
    box.scrollTop = box.scrollHeight;
  }

  // -- assist panels --------------------------------------------------------------------------

  /** Fill the list ``id`` with one item per entry (``render`` makes it), or say it is empty. */
  function fillList(id, entries, empty, render) {
    const list = $(id);
    list.replaceChildren();
    if (!entries || !entries.length) {
      list.append(el("li", "empty", empty));
      return;
    }
    for (const entry of entries) list.append(render(entry));
  }

  function showNotes(notes) {
    fillList("notes", notes, "暂无备注 No notes", (note) => {
      const item = el("li", "", note.text || `${note.key}: ${note.value}`);
      if (typeof note.confidence === "number") {
        item.append(el("span", "conf", `(${Math.round(note.confidence * 100)}%)`));
      }
      return item;
    });
  }

  /** What the customer's earlier contacts had done for them (writes that ran): a ticket's
   *  number is what the customer calls back about. */
  function showEarlier(writes) {
    fillList("earlier", writes, "无 None", (write) => {
      const result = write.result && typeof write.result === "object" ? write.result : {};
      const ids = Object.entries(result)
        .filter(([key, value]) => key.endsWith("_id") && !["user_id", "order_id"].includes(key)
          && (typeof value === "string" || typeof value === "number"))
        .map(([, value]) => String(value));
      const item = el("li", "", write.explanation);
      if (ids.length) item.append(el("strong", "", ` → ${ids.join(", ")}`));
      const when = write.executed_at || write.decided_at;
      if (when) item.append(el("span", "conf", new Date(when * 1000).toLocaleString()));
      return item;
    });
  }

  function showIntent(intent, slots, missing) {
    const name = $("intent-name");
    const confidence = $("intent-confidence");
    const bar = $("confidence-bar");
    if (!intent) {
      name.textContent = "—";
      delete name.dataset.intent;
      confidence.textContent = "";
      bar.style.width = "0";
    } else {
      name.textContent = label("intents", intent.name);
      name.dataset.intent = intent.name;
      name.title = intent.name;
      const pct = Math.round(intent.confidence * 100);
      confidence.textContent = `置信度 confidence ${pct}%${intent.carried ? " · carried" : ""}`;
      bar.style.width = `${pct}%`;
    }
    const list = $("slots");
    list.replaceChildren();
    for (const [key, value] of Object.entries(slots || {})) {
      list.append(el("dt", "", label("slots", key)));
      list.append(el("dd", "", typeof value === "object" ? JSON.stringify(value) : value));
    }
    const gap = $("missing");
    gap.hidden = !(missing && missing.length);
    const named = (missing || []).map((slot) => label("slots", slot));
    gap.textContent = named.length ? `缺少 missing: ${named.join(", ")}` : "";
  }

  function showSuggestion(suggestion, outcome) {
    const box = $("suggestion");
    const source = $("suggestion-source");
    const compliance = $("suggestion-compliance");
    state.rating = null;
    state.feedbackSeq += 1; // an answer about the previous suggestion says nothing any more
    $("reason-form").hidden = true;
    $("feedback-status").textContent = "";
    $("suggestion-edited").hidden = true;
    for (const id of ["rate-up", "rate-down"]) $(id).setAttribute("aria-pressed", "false");
    if (!suggestion) {
      state.suggestion = null;
      box.value = "";
      box.disabled = true;
      source.hidden = compliance.hidden = true;
      for (const id of ["insert", "copy", "rate-up", "rate-down"]) $(id).disabled = true;
      return;
    }
    state.suggestion = {
      turnIndex: outcome.turn_index,
      text: suggestion.text,
      intent: outcome.intent && outcome.intent.name,
      editedSent: false,
    };
    box.value = suggestion.text;
    box.disabled = false;
    for (const id of ["insert", "copy", "rate-up", "rate-down"]) $(id).disabled = false;
    source.hidden = compliance.hidden = false;
    source.textContent = `来源 source: ${label("terms", suggestion.source)}`;
    compliance.className = `badge ${suggestion.compliant ? "ok" : "bad"}`;
    compliance.textContent = suggestion.compliant
      ? "合规 compliant"
      : `不合规 flagged: ${(suggestion.violations || []).join(", ")}`;
  }

  // -- suggestion feedback: the agent edits, inserts, copies and rates ------------------------

  function suggestionText() {
    return $("suggestion").value.trim();
  }

  function isEdited() {
    return Boolean(state.suggestion) && suggestionText() !== state.suggestion.text.trim();
  }

  async function feedback(event, extra = {}, said = "") {
    const current = state.suggestion;
    if (!current || !state.sessionId) return null;
    const text = suggestionText();
    const body = { user_id: state.user, agent_id: agentId(), event, ...extra };
    if (text && (event === "edited" || isEdited())) body.text = text;
    const mine = ++state.feedbackSeq;
    try {
      const path = `/v1/sessions/${encodeURIComponent(state.sessionId)}/suggestions/${current.turnIndex}/feedback`;
      const answer = await api(path, { method: "POST", body: JSON.stringify(body) });
      if (body.text) current.editedSent = true;
      if (said && mine === state.feedbackSeq) $("feedback-status").textContent = said;
      return answer;
    } catch (error) {
      if (mine === state.feedbackSeq) $("feedback-status").textContent = `未记录 not recorded: ${error.message}`;
      return null;
    }
  }

  async function insertSuggestion() {
    const text = suggestionText();
    if (!state.suggestion || !text) return;
    // Into the reply box as the agent's words: never sent until the agent presses Send.
    $("speaker").value = "agent";
    const input = $("utterance");
    input.value = text;
    input.focus();
    await feedback("inserted", {}, "已插入 inserted");
  }

  async function copySuggestion() {
    const text = suggestionText();
    if (!state.suggestion || !text) return;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const box = $("suggestion");
      box.select();
      document.execCommand("copy"); // older browsers and pages without clipboard permission
    }
    await feedback("copied", {}, "已复制 copied");
  }

  async function rate(useful) {
    if (!state.suggestion) return;
    state.rating = useful;
    $("rate-up").setAttribute("aria-pressed", String(useful));
    $("rate-down").setAttribute("aria-pressed", String(!useful));
    const form = $("reason-form");
    form.hidden = useful;
    await feedback("rated", { useful }, useful ? "已评价：有用 rated useful" : "已评价：没用 rated not useful");
    if (!useful) $("reason").focus();
  }

  async function sendReason() {
    const reason = $("reason").value.trim();
    if (state.rating !== false || !reason) return;
    if (await feedback("rated", { useful: false, reason }, `已评价：没用 rated not useful · ${reason}`)) {
      $("reason-form").hidden = true;
      $("reason").value = "";
    }
  }

  function editedChanged() {
    $("suggestion-edited").hidden = !isEdited();
  }

  async function editFinished() {
    if (isEdited() && state.suggestion && !state.suggestion.editedSent) await feedback("edited");
  }

  // -- knowledge, sentiment and alerts (fields a turn may carry) ------------------------------

  function showKnowledge(items) {
    fillList("knowledge", items, "暂无 None", (item) => {
      const card = el("li", "knowledge-card");
      card.dataset.testid = "knowledge-card";
      card.append(el("div", "title", item.title || item.article_id || "—"));
      if (item.passage) card.append(el("p", "passage", item.passage));
      // A retrieval score (BM25 or similarity), not a probability: shown as a number.
      const score = typeof item.score === "number" ? ` · 相关度 score ${item.score.toFixed(2)}` : "";
      const source = el("p", "source", `来源 source: ${item.source || item.article_id || "—"}${score}`);
      source.dataset.testid = "knowledge-source";
      card.append(source);
      return card;
    });
  }

  function showSentiment(sentiment) {
    const badge = $("sentiment");
    if (!sentiment || !sentiment.label) {
      badge.hidden = true;
      badge.textContent = "";
      return;
    }
    const score = typeof sentiment.score === "number" ? ` ${Math.round(sentiment.score * 100)}%` : "";
    badge.className = `badge ${sentiment.label}`;
    badge.dataset.label = sentiment.label;
    badge.textContent = `情绪 sentiment: ${label("terms", sentiment.label)}${score}`;
    badge.hidden = false;
  }

  function addAlerts(alerts) {
    for (const alert of alerts || []) {
      const key = `${alert.kind}|${alert.turn_index}|${alert.speaker}|${alert.message}`;
      if (!state.alerts.some((a) => a.key === key)) state.alerts.unshift({ ...alert, key });
    }
    showAlerts();
  }

  function showAlerts() {
    fillList("alerts", state.alerts, "暂无 None", (alert) => {
      const item = el("li", "");
      item.dataset.testid = "alert-item";
      item.dataset.severity = alert.severity || "info";
      item.append(el("span", `badge ${alert.severity || "info"}`, label("terms", alert.severity || "info")));
      item.append(el("span", "", alert.message || label("terms", alert.kind)));
      const who = alert.speaker === "agent" ? "坐席 agent" : "客户 customer";
      item.append(el("span", "when", `${who} · #${alert.turn_index ?? "?"}`));
      return item;
    });
  }

  function callRow(call) {
    const workflow = call.source === "workflow";
    const from = workflow ? `${shortLabel("terms", "workflow")} · ${shortLabel("steps", call.step)}` : label("terms", "turn");
    const fromTitle = workflow ? `workflow step ${labelTitle("steps", call.step)}` : "";
    const latency = typeof call.latency_ms === "number" ? `${call.latency_ms.toFixed(1)} ms` : "—";
    return [
      [label("tools", call.tool), "", call.tool],
      [from, "", fromTitle],
      [label("statuses", call.status), call.status === "ok" ? "status-ok" : "status-bad", call.status],
      [latency, "num"],
    ];
  }

  function showToolCalls(calls) {
    state.toolCalls = [...(calls || [])];
    fillTable($("tool-calls"), state.toolCalls.map(callRow), 4);
  }

  /** A workflow ran steps outside a turn (after an approval): list the tool calls it made. */
  function addWorkflowCalls(view) {
    const seen = new Set(state.toolCalls.map((c) => `${c.source}:${c.step}:${c.tool}`));
    for (const step of view.steps || []) {
      if (!step.tool || !step.finished_at || seen.has(`workflow:${step.name}:${step.tool}`)) continue;
      state.toolCalls.push({
        tool: step.tool,
        source: "workflow",
        step: step.name,
        status: step.status === "succeeded" ? "ok" : step.status,
        latency_ms: step.duration_ms,
      });
    }
    fillTable($("tool-calls"), state.toolCalls.map(callRow), 4);
  }

  function showWorkflow(workflow) {
    const steps = $("steps");
    steps.replaceChildren();
    const image = $("workflow-image");
    // The picture the customer must read from (a captcha) while the workflow waits for them.
    image.hidden = !(workflow && workflow.image);
    if (workflow && workflow.image) image.src = workflow.image;
    else image.removeAttribute("src");
    if (!workflow) {
      $("workflow").textContent = "—";
      delete $("workflow").dataset.workflow;
      delete $("workflow").dataset.status;
      return;
    }
    // A step waits for the customer's input (a slot) or for the agent's approval of a write.
    const approval = (workflow.waiting_for || "").startsWith("approval:")
      ? workflow.waiting_for.slice("approval:".length)
      : null;
    let status = label("statuses", workflow.withdrawn ? "withdrawn" : workflow.status);
    let waiting = workflow.waiting_for ? ` · 等待 waiting for ${label("slots", workflow.waiting_for)}` : "";
    if (approval) {
      status = label("statuses", "proposed");
      waiting = ` · ${label("tools", approval)}`;
    }
    const line = $("workflow");
    line.textContent = `${label("workflows", workflow.name)} · ${status}${waiting}`;
    line.dataset.workflow = workflow.name;
    line.dataset.status = workflow.status;
    for (const step of workflow.steps || []) {
      const item = el("li", "", label("steps", step.name));
      item.dataset.step = step.name;
      if (step.tool) item.append(el("span", "tool", label("tools", step.tool)));
      const awaits = approval && step.status === "waiting_input" && step.tool === approval;
      const shown = awaits ? "proposed" : step.status;
      item.append(el("span", `st st-${shown}`, label("statuses", shown)));
      steps.append(item);
    }
  }

  // -- proposals: writes wait for the agent ---------------------------------------------------

  function agentId() {
    return $("agent-id").value.trim() || "agent";
  }

  function decide(type, proposal, extra) {
    const socket = state.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      showAlert("未连接 Not connected");
      return;
    }
    socket.send(JSON.stringify({ type, proposal_id: proposal.id, agent_id: agentId(), ...extra }));
  }

  function approve(proposal, edited) {
    // The revision shown: a proposal the customer's words changed since is refused, not run.
    const seen = { revision: proposal.revision || 0 };
    decide("approve", proposal, edited ? { arguments: edited, ...seen } : seen);
  }

  function edit(proposal, item) {
    const area = item.querySelector("textarea") || el("textarea", "edit-args");
    if (!area.isConnected) {
      area.setAttribute("aria-label", "arguments (JSON)");
      area.dataset.testid = "proposal-arguments";
      area.value = JSON.stringify(proposal.arguments, null, 2);
      const save = el("button", "", "批准修改 Approve edited");
      save.type = "button";
      save.dataset.testid = "proposal-approve-edited";
      save.addEventListener("click", () => {
        try {
          approve(proposal, JSON.parse(area.value));
        } catch (error) {
          showAlert(`参数不是 JSON Arguments are not JSON: ${error.message}`);
        }
      });
      item.append(area, save);
    }
    area.focus();
  }

  function reject(proposal) {
    const reason = window.prompt("拒绝原因 Reason for rejecting", "");
    if (reason && reason.trim()) decide("reject", proposal, { reason: reason.trim() });
  }

  function showProposals() {
    const list = $("proposals");
    list.replaceChildren();
    const all = [...state.proposals.values()];
    if (!all.length) {
      list.append(el("li", "empty", "暂无 None"));
      return;
    }
    for (const proposal of all.reverse()) {
      const item = el("li", `proposal proposal-${proposal.status}`);
      item.dataset.testid = "proposal";
      item.dataset.status = proposal.status;
      const head = el("div", "proposal-head");
      head.append(
        el("strong", "", label("tools", proposal.tool)),
        el("span", `st st-${proposal.status}`, label("statuses", proposal.status)),
      );
      item.append(head, el("p", "", proposal.explanation));
      // Once decided, what ran (the agent may have edited it); before, what is proposed.
      const shown = proposal.executed_arguments || proposal.arguments || {};
      const args = Object.entries(shown).map(([k, v]) => `${k}=${v}`).join(", ");
      item.append(el("p", "meta", args));
      if (proposal.why && proposal.why.rule) item.append(el("p", "meta", `why: ${proposal.why.rule}`));
      if (proposal.status === "proposed") {
        const buttons = el("div", "proposal-actions");
        const actions = [
          ["批准 Approve", "approve", () => approve(proposal)],
          ["修改 Edit", "edit", () => edit(proposal, item)],
          ["拒绝 Reject", "reject", () => reject(proposal)],
        ];
        for (const [label, name, handler] of actions) {
          const button = el("button", name === "reject" ? "ghost" : "", label);
          button.type = "button";
          button.dataset.testid = `proposal-${name}`;
          button.addEventListener("click", handler);
          buttons.append(button);
        }
        item.append(buttons);
      } else if (proposal.agent_id) {
        const when = proposal.result_status ? ` · ${label("statuses", proposal.result_status)}` : "";
        item.append(el("p", "meta", `${proposal.agent_id}${when}${proposal.reason ? ` · ${proposal.reason}` : ""}`));
      }
      list.append(item);
    }
  }

  function rememberProposals(proposals) {
    for (const proposal of proposals || []) state.proposals.set(proposal.id, proposal);
    showProposals();
  }

  function newestPending() {
    return [...state.proposals.values()].reverse().find((p) => p.status === "proposed");
  }

  // Alt+A / E / R: the newest pending proposal. Alt+I / C / U / N: the suggestion.
  document.addEventListener("keydown", (event) => {
    if (!event.altKey || event.ctrlKey || event.metaKey) return;
    // The physical key: on macOS Option+letter types another character (event.key "ç").
    const key = /^Key[A-Z]$/.test(event.code) ? event.code.slice(3).toLowerCase() : event.key.toLowerCase();
    const suggestionKeys = {
      i: insertSuggestion,
      c: copySuggestion,
      u: () => rate(true),
      n: () => rate(false),
    };
    if (suggestionKeys[key]) {
      if (!state.suggestion) return;
      event.preventDefault();
      suggestionKeys[key]();
      return;
    }
    const proposal = newestPending();
    if (!proposal) return;
    if (key === "a") approve(proposal);
    else if (key === "r") reject(proposal);
    else if (key === "e") {
      const item = [...$("proposals").children].find((li) => li.textContent.includes(proposal.explanation));
      if (item) edit(proposal, item);
    } else return;
    event.preventDefault();
  });

  // Every panel shows the newest turn: what the turn does not carry is cleared, not kept.
  function showAssist(outcome) {
    setPending(-1);
    rememberProposals(outcome.proposals);
    rememberProposals(outcome.withdrawn || []); // taken back by the customer: no longer to approve
    showIntent(outcome.intent, outcome.slots, outcome.missing_slots);
    showSuggestion(outcome.suggestion, outcome);
    showToolCalls(outcome.tool_calls);
    showWorkflow(outcome.workflow || null);
    showKnowledge(outcome.knowledge);
    showSentiment(outcome.sentiment);
    addAlerts(outcome.alerts);
    showNotes(outcome.notes);
    if ((outcome.tool_calls || []).length) refreshBreakers();
  }

  function resetPanels() {
    state.pending = 0;
    setPending(0);
    showIntent(null, {}, []);
    showSuggestion(null);
    showToolCalls([]);
    showWorkflow(null);
    showKnowledge([]);
    showSentiment(null);
    state.alerts = [];
    showAlerts();
  }

  /** The pending indicator: shown from a final customer segment until its assist arrives. */
  function setPending(delta) {
    state.pending = Math.max(0, state.pending + delta);
    const busy = state.pending > 0;
    $("pending").hidden = !busy;
    $("assist").setAttribute("aria-busy", String(busy));
  }

  // -- breakers -------------------------------------------------------------------------------

  async function refreshBreakers() {
    try {
      const body = await api("/v1/tools");
      fillTable(
        $("breakers"),
        body.tools.map((tool) => {
          const breaker = tool.breaker || { state: "closed", failures: 0 };
          return [
            [shortLabel("tools", tool.name), "", labelTitle("tools", tool.name)],
            [shortLabel("statuses", breaker.state), `state-${breaker.state}`, labelTitle("statuses", breaker.state)],
            [breaker.failures, "num"],
          ];
        }),
        3,
      );
      $("breakers-at").textContent = new Date().toLocaleTimeString();
    } catch (error) {
      $("breakers-at").textContent = `(${error.message})`;
    }
  }

  // -- the session socket ---------------------------------------------------------------------

  async function connect() {
    clearTimeout(state.reconnect);
    if (!state.sessionId) return;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const query = new URLSearchParams({ user_id: state.user });
    if (apiKey()) {
      // The key stays in a header: the socket opens with a one-use ticket, never the key.
      const sid = state.sessionId;
      try {
        const grant = await api(`/v1/sessions/${encodeURIComponent(sid)}/ws-ticket`, {
          method: "POST",
          body: JSON.stringify({ user_id: state.user }),
        });
        if (grant.ticket) query.set("ticket", grant.ticket);
      } catch (error) {
        showAlert(error.message);
        return;
      }
      if (state.sessionId !== sid) return;
    }
    const url = `${scheme}//${location.host}/v1/sessions/${encodeURIComponent(state.sessionId)}/ws?${query}`;
    const socket = new WebSocket(url);
    state.socket = socket;
    setConnection("wait", "连接中 connecting");

    socket.onmessage = (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message.type === "ready") {
        setConnection("live", "已连接 live");
        setInputEnabled(true);
        showAlert("");
      } else if (message.type === "segment") {
        addSegment(message.speaker, message.text, message.final);
        if (message.final && message.speaker === "customer") setPending(1);
      } else if (message.type === "alert") {
        addAlerts([message]);
      } else if (message.type === "assist") {
        showAssist(message);
      } else if (message.type === "proposals") {
        rememberProposals(message.proposals);
      } else if (message.type === "proposal") {
        rememberProposals([message.proposal]);
        if (message.proposal.workflow_id) refreshWorkflow(message.proposal.workflow_id);
      } else if (message.type === "error") {
        if (message.seq !== undefined) setPending(-1);
        showAlert(`${message.error.code}: ${message.error.message}`);
      }
    };

    socket.onclose = (event) => {
      if (state.socket !== socket) return; // replaced by a newer session
      state.socket = null;
      setInputEnabled(false);
      state.pending = 0; // an answer cannot come on a closed socket
      setPending(0);
      if (event.code === 4404) {
        setConnection("down", "会话已结束 ended");
        state.sessionId = null;
        setInputEnabled(false);
      } else if (event.code === 4401) {
        setConnection("down", "需要密钥 key required");
        showAlert("A valid API key is required: enter it at the top right.");
      } else {
        setConnection("wait", "重连中 reconnecting");
        state.reconnect = setTimeout(connect, RECONNECT_MS);
      }
    };
  }

  async function openSession(user) {
    showAlert("");
    try {
      const session = await api("/v1/sessions", {
        method: "POST",
        body: JSON.stringify({ user_id: user }),
      });
      if (state.socket) {
        const old = state.socket;
        state.socket = null;
        old.close(1000);
      }
      state.user = user;
      state.sessionId = session.session_id;
      $("session-id").textContent = session.session_id;
      $("closed-summary").textContent = "";
      await loadLabels();
      showNotes(session.notes);
      showEarlier(session.earlier);
      showHistory(session.turns || []);
      resetPanels();
      state.proposals.clear();
      loadProposals();
      connect();
      refreshBreakers();
    } catch (error) {
      showAlert(`打开会话失败 Could not open the session: ${error.message}`);
    }
  }

  /** DELETE the session; true once it is closed (already closed elsewhere counts). */
  async function endSession(sessionId, user) {
    const params = new URLSearchParams({ user_id: user });
    let closed = {};
    try {
      closed = await api(`/v1/sessions/${encodeURIComponent(sessionId)}?${params}`, { method: "DELETE" });
    } catch (error) {
      if (error.status !== 404) throw error;
    }
    // The socket may have been told first (4404) and cleared the id: no other session since.
    if (state.sessionId === sessionId || state.sessionId === null) {
      if (closed.notes) showNotes(closed.notes);
      const socket = state.socket;
      state.socket = null;
      state.sessionId = null;
      socket?.close(1000);
      setInputEnabled(false);
      resetPanels();
      setConnection("idle", "会话已结束 ended");
    }
    return true;
  }

  // -- close: the after-contact summary and disposition the agent confirms ------------------

  const closing = { sessionId: null, user: null, summary: null, choices: [] };

  function dispositionName(choice) {
    const zh = choice.label.zh || "";
    const en = choice.label.en || "";
    return zh && en && zh !== en ? `${zh} ${en}` : zh || en || choice.id;
  }

  /** The pack's dispositions with both names; the summary's own labels when the list fails. */
  async function loadDispositions(summary) {
    try {
      const body = await api("/v1/pack/dispositions");
      return body.dispositions;
    } catch {
      const names = summary.disposition.labels || {};
      return summary.disposition.choices.map((id) => ({ id, label: { [summary.language]: names[id] || id } }));
    }
  }

  function setDialogError(message) {
    $("summary-error").textContent = message || "";
    $("summary-error").hidden = !message;
  }

  function setDialogBusy(busy) {
    for (const id of ["summary-save", "summary-skip", "summary-disposition"]) $(id).disabled = busy;
    $("summary-text").readOnly = busy;
  }

  async function openCloseDialog() {
    if (!state.sessionId) return;
    const dialog = $("close-dialog");
    Object.assign(closing, { sessionId: state.sessionId, user: state.user, summary: null, choices: [] });
    setDialogError("");
    $("summary-text").value = "";
    $("summary-source").textContent = "";
    $("summary-proposed").textContent = "";
    $("summary-disposition").replaceChildren();
    $("summary-loading").hidden = false;
    setDialogBusy(true);
    $("summary-skip").disabled = false; // closing without a summary never waits for one
    dialog.showModal();
    const sid = closing.sessionId;
    try {
      const params = new URLSearchParams({ user_id: closing.user });
      const summary = await api(`/v1/sessions/${encodeURIComponent(sid)}/summary?${params}`);
      const choices = await loadDispositions(summary);
      if (closing.sessionId !== sid || !dialog.open) return;
      showSummary(summary, choices);
      setDialogBusy(false);
      $("summary-text").focus();
    } catch (error) {
      if (closing.sessionId !== sid) return;
      setDialogError(`小结生成失败 Could not write the summary: ${error.message}`);
      $("summary-skip").disabled = false;
    } finally {
      if (closing.sessionId === sid) $("summary-loading").hidden = true;
    }
  }

  function showSummary(summary, choices) {
    closing.summary = summary;
    closing.choices = choices;
    $("summary-text").value = summary.text;
    const source = summary.source === "offline" ? label("terms", "offline") : summary.source;
    $("summary-source").textContent = `(${source})`;
    const select = $("summary-disposition");
    select.replaceChildren();
    const proposed = summary.disposition.proposed;
    for (const choice of choices) {
      const option = el("option", "", dispositionName(choice) + (choice.id === proposed ? " · 建议 proposed" : ""));
      option.value = choice.id;
      select.append(option);
    }
    select.value = summary.disposition.chosen;
    const named = choices.find((c) => c.id === proposed);
    $("summary-proposed").textContent = `建议 Proposed: ${named ? dispositionName(named) : proposed}`;
    $("summary-proposed").dataset.disposition = proposed;
  }

  async function saveSummary() {
    const { sessionId, user, summary } = closing;
    if (!sessionId || !summary) return;
    const text = $("summary-text").value.trim();
    if (!text) {
      setDialogError("小结不能为空 The summary is empty");
      $("summary-text").focus();
      return;
    }
    const disposition = $("summary-disposition").value;
    setDialogError("");
    setDialogBusy(true);
    try {
      await api(`/v1/sessions/${encodeURIComponent(sessionId)}/summary`, {
        method: "PUT",
        body: JSON.stringify({ user_id: user, agent_id: agentId(), text, disposition, kind: "after_contact" }),
      });
    } catch (error) {
      setDialogError(`保存失败 Could not save: ${error.message}`);
      setDialogBusy(false);
      return;
    }
    const choice = closing.choices.find((c) => c.id === disposition);
    await finishClose(`已保存小结 Summary saved · ${choice ? dispositionName(choice) : disposition}`);
  }

  async function finishClose(said) {
    setDialogBusy(true);
    try {
      await endSession(closing.sessionId, closing.user);
    } catch (error) {
      setDialogError(`结束会话失败 Could not close the session: ${error.message}`);
      setDialogBusy(false);
      $("summary-skip").disabled = false;
      return;
    }
    closing.sessionId = null;
    $("closed-summary").textContent = said;
    $("close-dialog").close();
  }

  /** Focus goes back where it came from, or to the customer field once the session ended. */
  function closeDialogClosed() {
    closing.sessionId = null;
    const back = $("close-session");
    (back.disabled ? $("user-id") : back).focus();
  }

  async function loadProposals() {
    try {
      const params = new URLSearchParams({ user_id: state.user });
      const body = await api(`/v1/sessions/${encodeURIComponent(state.sessionId)}/proposals?${params}`);
      rememberProposals(body.proposals);
    } catch (error) {
      showAlert(error.message);
    }
  }

  async function refreshWorkflow(workflowId) {
    try {
      const params = new URLSearchParams({ user_id: state.user });
      const view = await api(`/v1/workflows/${encodeURIComponent(workflowId)}?${params}`);
      showWorkflow({ ...view, steps: view.steps.map((s) => ({ name: s.name, status: s.status, tool: s.tool })) });
      addWorkflowCalls(view);
    } catch (error) {
      showAlert(error.message);
    }
  }

  function say(text) {
    const socket = state.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      showAlert("未连接 Not connected");
      return false;
    }
    const speaker = $("speaker").value;
    socket.send(JSON.stringify({ type: "segment", speaker, text, final: true }));
    return true;
  }

  // -- wiring ---------------------------------------------------------------------------------

  $("open-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const user = $("user-id").value.trim();
    if (user) openSession(user);
  });
  $("say-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("utterance");
    const text = input.value.trim();
    if (text && say(text)) input.value = "";
    input.focus();
  });
  $("close-session").addEventListener("click", openCloseDialog);
  $("close-form").addEventListener("submit", (event) => {
    event.preventDefault();
    saveSummary();
  });
  $("summary-skip").addEventListener("click", () => finishClose("已结束，未保存小结 Closed without a summary"));
  $("summary-cancel").addEventListener("click", () => $("close-dialog").close());
  $("close-dialog").addEventListener("close", closeDialogClosed); // Esc, Cancel or done
  $("insert").addEventListener("click", insertSuggestion);
  $("copy").addEventListener("click", copySuggestion);
  $("rate-up").addEventListener("click", () => rate(true));
  $("rate-down").addEventListener("click", () => rate(false));
  $("suggestion").addEventListener("input", editedChanged);
  $("suggestion").addEventListener("change", editFinished);
  $("reason-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sendReason();
  });
  $("api-key").value = sessionStorage.getItem("hermes-api-key") || "";
  $("api-key").addEventListener("change", () => {
    sessionStorage.setItem("hermes-api-key", apiKey());
    refreshBreakers();
    loadLabels();
  });

  loadLabels();
  refreshBreakers();
  setInterval(refreshBreakers, BREAKER_REFRESH_MS);
})();
