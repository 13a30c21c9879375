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
      throw new Error(`${response.status}: ${message}`);
    }
    return body;
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
      for (const [text, className] of cells) tr.append(el("td", className || "", text));
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

  function showNotes(notes) {
    const list = $("notes");
    list.replaceChildren();
    if (!notes || !notes.length) {
      list.append(el("li", "empty", "暂无备注 No notes"));
      return;
    }
    for (const note of notes) {
      const item = el("li", "", note.text || `${note.key}: ${note.value}`);
      if (typeof note.confidence === "number") {
        item.append(el("span", "conf", `(${Math.round(note.confidence * 100)}%)`));
      }
      list.append(item);
    }
  }

  function showIntent(intent, slots, missing) {
    const name = $("intent-name");
    const confidence = $("intent-confidence");
    const bar = $("confidence-bar");
    if (!intent) {
      name.textContent = "—";
      confidence.textContent = "";
      bar.style.width = "0";
    } else {
      name.textContent = intent.name;
      const pct = Math.round(intent.confidence * 100);
      confidence.textContent = `置信度 confidence ${pct}%${intent.carried ? " · carried" : ""}`;
      bar.style.width = `${pct}%`;
    }
    const list = $("slots");
    list.replaceChildren();
    for (const [key, value] of Object.entries(slots || {})) {
      list.append(el("dt", "", key));
      list.append(el("dd", "", typeof value === "object" ? JSON.stringify(value) : value));
    }
    const gap = $("missing");
    gap.hidden = !(missing && missing.length);
    gap.textContent = missing && missing.length ? `缺少 missing: ${missing.join(", ")}` : "";
  }

  function showSuggestion(suggestion) {
    const source = $("suggestion-source");
    const compliance = $("suggestion-compliance");
    if (!suggestion) {
      $("suggestion").textContent = "—";
      source.hidden = compliance.hidden = true;
      return;
    }
    $("suggestion").textContent = suggestion.text;
    source.hidden = compliance.hidden = false;
    source.textContent = `来源 source: ${suggestion.source}`;
    compliance.className = `badge ${suggestion.compliant ? "ok" : "bad"}`;
    compliance.textContent = suggestion.compliant
      ? "合规 compliant"
      : `不合规 flagged: ${(suggestion.violations || []).join(", ")}`;
  }

  function showToolCalls(calls) {
    fillTable(
      $("tool-calls"),
      (calls || []).map((call) => [
        [call.tool],
        [call.status, call.status === "ok" ? "status-ok" : "status-bad"],
        [`${Number(call.latency_ms).toFixed(1)} ms`, "num"],
      ]),
      3,
    );
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
      return;
    }
    const waiting = workflow.waiting_for ? ` · 等待 waiting for ${workflow.waiting_for}` : "";
    $("workflow").textContent = `${workflow.name} · ${workflow.status}${waiting}`;
    for (const step of workflow.steps || []) {
      const item = el("li", "", step.name);
      item.append(el("span", `st st-${step.status}`, step.status));
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
    decide("approve", proposal, edited ? { arguments: edited } : {});
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
      head.append(el("strong", "", proposal.tool), el("span", `st st-${proposal.status}`, proposal.status));
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
        const when = proposal.result_status ? ` · ${proposal.result_status}` : "";
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

  document.addEventListener("keydown", (event) => {
    if (!event.altKey) return;
    const proposal = newestPending();
    if (!proposal) return;
    const key = event.key.toLowerCase();
    if (key === "a") approve(proposal);
    else if (key === "r") reject(proposal);
    else if (key === "e") {
      const item = [...$("proposals").children].find((li) => li.textContent.includes(proposal.explanation));
      if (item) edit(proposal, item);
    } else return;
    event.preventDefault();
  });

  function showAssist(outcome) {
    rememberProposals(outcome.proposals);
    showIntent(outcome.intent, outcome.slots, outcome.missing_slots);
    showSuggestion(outcome.suggestion);
    showToolCalls(outcome.tool_calls);
    if (outcome.workflow) showWorkflow(outcome.workflow);
    showNotes(outcome.notes);
    if ((outcome.tool_calls || []).length) refreshBreakers();
  }

  function resetPanels() {
    showIntent(null, {}, []);
    showSuggestion(null);
    showToolCalls([]);
    showWorkflow(null);
  }

  // -- breakers -------------------------------------------------------------------------------

  async function refreshBreakers() {
    try {
      const body = await api("/v1/tools");
      fillTable(
        $("breakers"),
        body.tools.map((tool) => {
          const breaker = tool.breaker || { state: "closed", failures: 0 };
          return [[tool.name], [breaker.state, `state-${breaker.state}`], [breaker.failures, "num"]];
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
      } else if (message.type === "assist") {
        showAssist(message);
      } else if (message.type === "proposals") {
        rememberProposals(message.proposals);
      } else if (message.type === "proposal") {
        rememberProposals([message.proposal]);
        if (message.proposal.workflow_id) refreshWorkflow(message.proposal.workflow_id);
      } else if (message.type === "error") {
        showAlert(`${message.error.code}: ${message.error.message}`);
      }
    };

    socket.onclose = (event) => {
      if (state.socket !== socket) return; // replaced by a newer session
      state.socket = null;
      setInputEnabled(false);
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
      showNotes(session.notes);
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

  async function closeSession() {
    if (!state.sessionId) return;
    try {
      const params = new URLSearchParams({ user_id: state.user });
      const closed = await api(`/v1/sessions/${encodeURIComponent(state.sessionId)}?${params}`, {
        method: "DELETE",
      });
      showNotes(closed.notes);
      const socket = state.socket;
      state.socket = null;
      state.sessionId = null;
      socket?.close(1000);
      setInputEnabled(false);
      setConnection("idle", "会话已结束 ended");
    } catch (error) {
      showAlert(error.message);
    }
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
      showWorkflow({ ...view, steps: view.steps.map((s) => ({ name: s.name, status: s.status })) });
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
  $("close-session").addEventListener("click", closeSession);
  $("api-key").value = sessionStorage.getItem("hermes-api-key") || "";
  $("api-key").addEventListener("change", () => {
    sessionStorage.setItem("hermes-api-key", apiKey());
    refreshBreakers();
  });

  refreshBreakers();
  setInterval(refreshBreakers, BREAKER_REFRESH_MS);
})();
