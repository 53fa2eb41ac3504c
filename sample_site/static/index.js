/* Harbor Help Desk — ticket queue page: rendering, forms and WebMCP tools. */
"use strict";

(() => {
  const { api, say, showError, log, registerTool, sleep, param, el, badge } = window.Harbor;
  const controllers = {};

  let shown = [];

  /** Fetch the tickets and re-render the table. */
  async function renderTickets() {
    const { tickets } = await api("/api/tickets");
    shown = tickets;
    const body = document.querySelector("#tickets tbody");
    body.replaceChildren(...tickets.map((t) => {
      const row = el("tr");
      row.dataset.id = String(t.id);
      const link = el("a", t.subject);
      link.href = `/ticket.html?id=${t.id}`;
      const subject = el("td");
      subject.append(link);
      const status = el("td");
      status.append(badge(t.status));
      const priority = el("td");
      priority.append(badge(t.priority));
      row.append(el("td", `#${t.id}`), subject, status, priority);
      return row;
    }));
    return tickets;
  }

  /** Fetch today's shifts and render the list. */
  async function renderShifts() {
    const { shifts } = await api("/api/shifts");
    document.getElementById("shifts").replaceChildren(
      ...shifts.map((s) => el("li", `${s.agent} — ${s.hours} (${s.queue})`)));
  }

  /** Parse and validate an integer ticket id from tool input. */
  function ticketId(input) {
    const id = Number(input.id);
    if (!Number.isInteger(id)) throw new Error("id must be an integer");
    return id;
  }

  // ---- Imperative tools -------------------------------------------------
  controllers.list_tickets = registerTool({
    name: "list_tickets",
    title: "List tickets",
    description: "List support tickets, optionally filtered by status.",
    inputSchema: {
      type: "object",
      properties: {
        status: { type: "string", enum: ["open", "closed", "all"], description: "Which tickets to list (default all)" },
      },
    },
    annotations: { readOnlyHint: true },
    async execute(input) {
      const status = input.status || "all";
      return api(`/api/tickets?status=${encodeURIComponent(status)}`);
    },
  });

  controllers.get_queue_summary = registerTool({
    name: "get_queue_summary",
    title: "Queue summary",
    description: "Count the tickets in the queue as the page shows it, by status and by priority.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true },
    async execute() {
      const count = (key) => shown.reduce((acc, t) => ({ ...acc, [t[key]]: (acc[t[key]] || 0) + 1 }), {});
      return { total: shown.length, byStatus: count("status"), byPriority: count("priority") };
    },
  }, { quiet: true });

  controllers.get_ticket = registerTool({
    name: "get_ticket",
    title: "Get ticket",
    description: "Get one ticket with its description and notes.",
    inputSchema: {
      type: "object",
      properties: { id: { type: "integer", description: "Ticket number, e.g. 101" } },
      required: ["id"],
    },
    annotations: { readOnlyHint: true },
    async execute(input) {
      const id = ticketId(input);
      try {
        return await api(`/api/tickets/${id}`);
      } catch (err) {
        throw new Error(`No ticket #${id}`);
      }
    },
  });

  controllers.close_ticket = registerTool({
    name: "close_ticket",
    title: "Close ticket",
    description: "Close a ticket with a resolution message that is sent to the customer.",
    inputSchema: {
      type: "object",
      properties: {
        id: { type: "integer", description: "Ticket number" },
        resolution: { type: "string", description: "Short resolution shown to the customer" },
      },
      required: ["id", "resolution"],
    },
    annotations: { consequentialHint: true },
    async execute(input) {
      const id = ticketId(input);
      const ticket = await api(`/api/tickets/${id}/close`, { method: "POST", body: { resolution: String(input.resolution || "") } });
      await renderTickets();
      say(`Ticket #${id} closed.`);
      return { id: ticket.id, status: "closed" };
    },
  });

  controllers.add_note = registerTool({
    name: "add_note",
    title: "Add note",
    description: "Add an internal note to a ticket.",
    inputSchema: {
      type: "object",
      properties: {
        id: { type: "integer", description: "Ticket number" },
        text: { type: "string", minLength: 1, description: "The note text" },
      },
      required: ["id", "text"],
    },
    async execute(input) {
      const id = ticketId(input);
      await api(`/api/tickets/${id}/notes`, { method: "POST", body: { text: String(input.text || "") } });
      say(`Note added to ticket #${id}.`);
      return `Note added to ticket #${id}`;
    },
  });

  controllers.explode = registerTool({
    name: "explode",
    title: "Explode",
    description: "Diagnostic tool that always fails.",
    inputSchema: { type: "object", properties: {} },
    async execute() {
      showError("Ticket database is on fire");
      throw new Error("Ticket database is on fire");
    },
  });

  controllers.slow_report = registerTool({
    name: "slow_report",
    title: "Slow report",
    description: "Build the weekly queue report; takes the given number of seconds. Can be cancelled.",
    inputSchema: {
      type: "object",
      properties: { seconds: { type: "number", minimum: 0, description: "How long the report takes" } },
      required: ["seconds"],
    },
    annotations: { readOnlyHint: true },
    async execute(input, { signal } = {}) {
      const seconds = Number(input.seconds) || 0;
      say(`Building report (${seconds}s)…`);
      try {
        await sleep(seconds * 1000, signal);
      } catch (err) {
        say("Report cancelled.");
        throw err;
      }
      say("Report ready.");
      return { report: "done", seconds };
    },
  });

  controllers.claim_welcome_bonus = registerTool({
    name: "claim_welcome_bonus",
    title: "Claim welcome bonus",
    description: "Claim the one-time welcome bonus for new agents. Works only once.",
    inputSchema: { type: "object", properties: {} },
    async execute() {
      say("Welcome bonus claimed!");
      setTimeout(() => controllers.claim_welcome_bonus.abort(), 0);
      return { claimed: true };
    },
  });

  controllers.open_ticket_in_new_tab = registerTool({
    name: "open_ticket_in_new_tab",
    title: "Open ticket in new tab",
    description: "Open a ticket's detail page in a new browser tab.",
    inputSchema: {
      type: "object",
      properties: { id: { type: "integer", description: "Ticket number" } },
      required: ["id"],
    },
    async execute(input) {
      const id = ticketId(input);
      window.open(`/ticket.html?id=${id}`, "_blank");
      return { opened: true };
    },
  });

  /** Register escalate_ticket after a delay (?late=MS, ?late=never). */
  function registerLateTool() {
    const late = param("late", "1500");
    if (late === "never") return;
    const delay = Math.max(0, Number(late) || 0);
    setTimeout(() => {
      controllers.escalate_ticket = registerTool({
        name: "escalate_ticket",
        title: "Escalate ticket",
        description: "Escalate a ticket to the Tier 2 team and raise its priority to high.",
        inputSchema: {
          type: "object",
          properties: {
            id: { type: "integer", description: "Ticket number" },
            reason: { type: "string", description: "Why it needs Tier 2" },
          },
          required: ["id"],
        },
        annotations: { consequentialHint: true },
        async execute(input) {
          const id = ticketId(input);
          const text = `Escalated to Tier 2${input.reason ? `: ${input.reason}` : ""}`;
          await api(`/api/tickets/${id}/notes`, { method: "POST", body: { text } });
          say(`Ticket #${id} escalated.`);
          return { id, escalated: true };
        },
      });
      log("Escalation tool is now available");
    }, delay);
  }

  // ---- Declarative forms ------------------------------------------------
  const createForm = document.getElementById("create-ticket");
  createForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(createForm);
    const created = api("/api/tickets", {
      method: "POST",
      body: {
        subject: String(data.get("subject") || ""),
        priority: String(data.get("priority") || "normal"),
        description: String(data.get("description") || ""),
      },
    }).then(async (ticket) => {
      await renderTickets();
      say(`Ticket #${ticket.id} created.`);
      showError("");
      return { id: ticket.id, subject: ticket.subject };
    });
    // Reset only after the response settled: a reset while an agent call is pending cancels it.
    created.then(() => setTimeout(() => createForm.reset(), 0), () => {});
    if (e.agentInvoked) {
      e.respondWith(created);
    } else {
      created.catch((err) => showError(err.message));
    }
  });

  const contactForm = document.getElementById("contact-customer");
  contactForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(contactForm);
    const sent = api("/api/contact", {
      method: "POST",
      body: { email: String(data.get("email") || ""), message: String(data.get("message") || "") },
    }).then((result) => {
      say(`Message sent to ${result.email}.`);
      return result;
    });
    sent.then(() => setTimeout(() => contactForm.reset(), 0), () => {});
    if (e.agentInvoked) {
      e.respondWith(sent);
    } else {
      sent.catch((err) => showError(err.message));
    }
  });

  window.harborControllers = controllers;
  registerLateTool();
  Promise.all([renderTickets(), renderShifts()])
    .then(() => say("Queue loaded."))
    .catch((err) => showError(`Could not load the queue: ${err.message}`));
})();
