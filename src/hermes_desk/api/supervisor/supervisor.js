// Hermes Desk supervisor page: live sessions of the tenant with sentiment trend and alerts.
// Reads GET /v1/supervisor/events (server-sent events) with fetch, so the API key travels in
// the X-API-Key header and never in a URL.
"use strict";

(() => {
  const RECONNECT_MS = 2000;
  const MAX_ALERTS = 200;
  const $ = (id) => document.getElementById(id);

  const SENTIMENT = { negative: "负面 negative", neutral: "中性 neutral", positive: "正面 positive" };
  const KINDS = {
    regulator_threat: "监管投诉威胁 Regulator threat",
    media_threat: "媒体曝光威胁 Media threat",
    legal_threat: "法律威胁 Legal threat",
    abuse: "辱骂 Abuse",
    negative_streak: "连续负面 Negative streak",
    verification_failures: "验证多次失败 Verification failures",
    over_promise: "过度承诺 Over-promise",
    full_number: "完整号码 Full number read out",
    credential_request: "索要密码/验证码 Credential request",
  };
  const SPEAKER = { customer: "客户 customer", agent: "坐席 agent" };

  const state = { sessions: new Map(), alerts: [], controller: null, retry: null, generation: 0 };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function setConnection(kind, label) {
    const pill = $("conn");
    pill.className = `pill pill-${kind}`;
    pill.textContent = label;
  }

  function showError(message) {
    $("error").textContent = message || "";
    $("error").hidden = !message;
  }

  function time(at) {
    if (!at) return "—";
    return new Date(at * 1000).toLocaleTimeString();
  }

  // -- rendering ------------------------------------------------------------------------------

  function sentimentBadge(point) {
    if (!point) return el("span", "empty", "—");
    const badge = el("span", `badge badge-${point.label}`, SENTIMENT[point.label] || point.label);
    badge.title = `score ${Number(point.score).toFixed(2)}`;
    return badge;
  }

  function trend(points) {
    const box = el("div", "trend");
    box.setAttribute("role", "img");
    const labels = points.map((p) => p.label);
    box.setAttribute("aria-label", labels.length ? `trend: ${labels.join(", ")}` : "no trend yet");
    for (const point of points.slice(-15)) {
      const bar = el("span", `t-${point.label}`);
      // Height from the signed score: -1 → tall red, +1 → tall green, 0 → short grey.
      bar.style.height = `${30 + Math.round(Math.abs(Number(point.score) || 0) * 70)}%`;
      box.append(bar);
    }
    return box;
  }

  function renderSessions() {
    const body = $("sessions-body");
    body.replaceChildren();
    const sessions = [...state.sessions.values()].sort((a, b) => b.last_at - a.last_at);
    $("session-count").textContent = String(sessions.length);
    if (!sessions.length) {
      const tr = el("tr");
      const td = el("td", "empty", "暂无会话 No live sessions");
      td.colSpan = 6;
      tr.append(td);
      body.append(tr);
      return;
    }
    for (const s of sessions) {
      const tr = el("tr", s.critical ? "critical" : "");
      tr.dataset.sessionId = s.session_id;
      const sid = el("td", "sid", s.session_id.slice(0, 12));
      sid.title = s.session_id;
      const turns = el("td", "", `${s.customer_turns} / ${s.agent_turns}`);
      turns.title = "customer / agent";
      const now = el("td", "sentiment");
      now.append(sentimentBadge(s.sentiment));
      const tr2 = el("td");
      tr2.append(trend(s.sentiment_trend || []));
      const alerts = el("td", "alert-cell");
      if (s.alert_count) {
        const last = s.alerts[s.alerts.length - 1];
        const badge = el("span", `badge badge-${last.severity}`, String(s.alert_count));
        badge.title = Object.entries(s.alert_counts).map(([k, n]) => `${KINDS[k] || k}: ${n}`).join("\n");
        alerts.append(badge, " ", el("span", "alert-kind", KINDS[last.kind] || last.kind));
      } else {
        alerts.append(el("span", "empty", "—"));
      }
      tr.append(sid, turns, now, tr2, alerts, el("td", "", time(s.last_at)));
      body.append(tr);
    }
  }

  function renderAlerts() {
    const list = $("alerts");
    list.replaceChildren();
    $("alert-count").textContent = String(state.alerts.length);
    $("alerts-empty").hidden = state.alerts.length > 0;
    for (const { sessionId, alert } of state.alerts) {
      const li = el("li", `sev-${alert.severity}`);
      li.dataset.kind = alert.kind;
      const meta = el("span", "meta");
      meta.append(
        el("span", `badge badge-${alert.severity}`, alert.severity),
        ` ${KINDS[alert.kind] || alert.kind} · ${SPEAKER[alert.speaker] || alert.speaker} · `,
        el("span", "sid", sessionId.slice(0, 12)),
        ` · ${time(alert.at)}`,
      );
      li.append(meta, el("span", "msg", alert.message));
      list.append(li);
    }
  }

  function addAlert(sessionId, alert) {
    state.alerts.unshift({ sessionId, alert });
    state.alerts.length = Math.min(state.alerts.length, MAX_ALERTS);
  }

  // -- the feed ---------------------------------------------------------------------------------

  function apply(type, data) {
    if (type === "snapshot") {
      state.sessions = new Map(data.sessions.map((s) => [s.session_id, s]));
      state.alerts = [];
      const all = [];
      for (const s of data.sessions) for (const a of s.alerts) all.push({ sessionId: s.session_id, alert: a });
      all.sort((x, y) => (y.alert.at || 0) - (x.alert.at || 0));
      state.alerts = all.slice(0, MAX_ALERTS);
      renderAlerts();
    } else if (type === "session_opened" || type === "turn") {
      state.sessions.set(data.session.session_id, data.session);
    } else if (type === "session_closed") {
      state.sessions.delete(data.session_id);
    } else if (type === "alert") {
      const s = state.sessions.get(data.session_id);
      if (s) {
        s.alerts = [...(s.alerts || []), data.alert].slice(-20);
        s.alert_count = (s.alert_count || 0) + 1;
        s.alert_counts = { ...(s.alert_counts || {}) };
        s.alert_counts[data.alert.kind] = (s.alert_counts[data.alert.kind] || 0) + 1;
        if (data.alert.severity === "critical") s.critical = true;
      }
      addAlert(data.session_id, data.alert);
      renderAlerts();
    }
    renderSessions();
  }

  function parseBlock(block) {
    let type = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue; // keep-alive comment
      if (line.startsWith("event:")) type = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (!data.length) return null;
    return [type, JSON.parse(data.join("\n"))];
  }

  async function connect() {
    clearTimeout(state.retry);
    if (state.controller) state.controller.abort();
    const generation = ++state.generation;
    const controller = new AbortController();
    state.controller = controller;
    const headers = { accept: "text/event-stream" };
    const key = $("api-key").value.trim();
    if (key) headers["x-api-key"] = key;
    setConnection("wait", "连接中 connecting");
    try {
      const response = await fetch("/v1/supervisor/events", { headers, signal: controller.signal });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        const message = (body.error && body.error.message) || response.statusText;
        setConnection("off", "未连接 offline");
        showError(`${response.status}: ${message}`);
        return; // a refused key is not retried
      }
      showError("");
      setConnection("on", "已连接 live");
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const parsed = parseBlock(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (parsed) apply(parsed[0], parsed[1]);
        }
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      showError(`feed: ${error.message}`);
    }
    if (generation !== state.generation) return;
    setConnection("wait", "重连中 reconnecting");
    state.retry = setTimeout(connect, RECONNECT_MS);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("connect-form").addEventListener("submit", (event) => {
      event.preventDefault();
      connect();
    });
    connect();
  });
})();
